"""The PostgreSQL store's ``secrets`` table is readable by the store's role only.

The seed and the seat-token hashes are kept there, never in a log (docs/stores.md): the file store
keeps them in 0600 files, the PostgreSQL store revokes the table from PUBLIC as it creates it. On
a server with PostgreSQL's defaults another role reads none of the store's tables anyway, so the
test first grants SELECT on every new table of the schema to PUBLIC (``ALTER DEFAULT
PRIVILEGES``, as an administrator who lets analysts read the logs would): then the logs' tables are
readable by another role, and the secrets still are not.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql

from mortecouille.events.storage.postgres import PostgresStore
from tests.postgres_server import PostgresServer

pytestmark = pytest.mark.postgres


@pytest.fixture
def analyst(postgres_server: PostgresServer) -> Iterator[tuple[str, str]]:
    """A fresh schema whose new tables are granted to PUBLIC, and another login role (an
    analyst) that may use it: (schema, the analyst's URL)."""
    schema = f"s_{uuid.uuid4().hex[:12]}"
    role = f"analyst_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server.url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        admin.execute(
            sql.SQL("ALTER DEFAULT PRIVILEGES IN SCHEMA {} GRANT SELECT ON TABLES TO PUBLIC").format(
                sql.Identifier(schema)
            )
        )
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        admin.execute(
            sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(schema), sql.Identifier(role))
        )
    url = postgres_server.url.replace("postgresql://postgres@", f"postgresql://{role}@", 1)
    try:
        yield schema, url
    finally:
        with psycopg.connect(postgres_server.url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
            admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_the_secrets_table_is_revoked_from_public_while_the_logs_tables_follow_the_schemas_grants(
    postgres_server: PostgresServer, analyst: tuple[str, str]
) -> None:
    schema, analyst_url = analyst
    with PostgresStore(postgres_server.url, schema=schema):
        pass  # creates the store's tables in the schema, as its role (the administrator here)
    with psycopg.connect(analyst_url, autocommit=True) as conn:
        for table in ("games", "events", "snapshots"):  # the schema's grant reached the store's tables
            conn.execute(
                sql.SQL("SELECT count(*) FROM {}.{}").format(sql.Identifier(schema), sql.Identifier(table))
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(sql.SQL("SELECT data FROM {}.secrets").format(sql.Identifier(schema)))
    with psycopg.connect(postgres_server.url, autocommit=True) as owner:  # the store's role still reads it
        owner.execute(sql.SQL("SELECT data FROM {}.secrets").format(sql.Identifier(schema)))
