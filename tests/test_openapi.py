"""The OpenAPI document the service serves at ``/schema`` (docs/service.md, "HTTP API"): generated
from the controllers, it holds every route of the application, and every example body the docs
give is valid against it (and is a body the service decodes)."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest
from litestar import Litestar
from litestar.routes import HTTPRoute
from litestar.testing import TestClient

from mortecouille.web.server import build_app

DOCS = Path(__file__).resolve().parent.parent / "docs" / "service.md"

#: ``METHOD /path``, then a fenced JSON block: docs/service.md's example bodies.
EXAMPLE = re.compile(r"^`(GET|POST|PUT|PATCH|DELETE) (/[^`]*)`:\n\n```json\n(.*?)\n```", re.M | re.S)
#: The methods every route answers besides its own (never documented one by one).
IMPLICIT_METHODS = {"HEAD", "OPTIONS"}


@pytest.fixture
def served(tmp_path: Path) -> tuple[Litestar, dict[str, Any]]:
    app = build_app(tmp_path, deadline_seconds=None)
    with TestClient(app) as client:
        answer = client.get("/schema/openapi.json")
        assert answer.status_code == 200, answer.text
        return app, answer.json()


def documented_examples() -> list[tuple[str, str, Any]]:
    return [
        (method, path, msgspec.json.decode(body.encode()))
        for method, path, body in EXAMPLE.findall(DOCS.read_text(encoding="utf-8"))
    ]


def body_schema(document: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    """The JSON schema of the body of ``method path`` (its components beside it, for the $refs)."""
    operation = document["paths"][path][method.lower()]
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    return {**schema, "components": document["components"]}


def routes_of(app: Litestar) -> set[tuple[str, str]]:
    """Every (method, path) the application routes, in OpenAPI's spelling (``{game}``), but the
    schema's own."""
    found = set()
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or route.path.startswith("/schema"):
            continue
        for method in set(route.methods) - IMPLICIT_METHODS:
            found.add((method, route.path_format or "/"))
    return found


def test_the_schema_is_served_as_json_only_under_the_pages_security_headers(tmp_path: Path) -> None:
    with TestClient(build_app(tmp_path, deadline_seconds=None)) as client:
        document = client.get("/schema")
        assert document.status_code == 200
        assert document.json()["openapi"].startswith("3.")
        assert document.headers["content-security-policy"] == "default-src 'self'; frame-ancestors 'none'"
        # no page rendering it: it would load what the Content-Security-Policy forbids
        for page in ("/schema/swagger", "/schema/redoc", "/schema/elements"):
            assert client.get(page).status_code == 404


def test_every_route_of_the_application_is_in_the_schema(served: tuple[Litestar, dict[str, Any]]) -> None:
    app, document = served
    in_schema = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    routes = routes_of(app)
    assert ("POST", "/api/games/{game}/buy") in routes  # the routes are read as the schema spells them
    assert routes - in_schema == set()
    assert in_schema - routes == set()


def test_every_documented_example_body_is_valid_against_the_schema(
    served: tuple[Litestar, dict[str, Any]],
) -> None:
    _app, document = served
    examples = documented_examples()
    assert examples, "docs/service.md gives no example body"
    for method, path, body in examples:
        assert path in document["paths"] and method.lower() in document["paths"][path], (method, path)
        jsonschema.validate(body, body_schema(document, method, path))


def test_every_endpoint_that_takes_a_body_has_a_documented_example(
    served: tuple[Litestar, dict[str, Any]],
) -> None:
    _app, document = served
    with_body = {
        (method.upper(), path)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if "requestBody" in operation
    }
    documented = [(method, path) for method, path, _ in documented_examples()]
    assert len(documented) == len(set(documented)), "an endpoint documented twice"
    assert with_body == set(documented)


def test_the_schemas_refuse_what_the_service_refuses(served: tuple[Litestar, dict[str, Any]]) -> None:
    """The check is not vacuous: each example broken (a required field dropped, or of the wrong
    type) is refused by its schema."""
    _app, document = served
    for method, path, body in documented_examples():
        schema = body_schema(document, method, path)
        name = next(iter(body))
        broken = copy.deepcopy(body)
        broken[name] = {"not": "a value of this field"}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)


def test_the_documented_examples_are_bodies_the_service_decodes(tmp_path: Path) -> None:
    """Each example reaches its handler: refused for the game missing (404) or the seat (401),
    never as a malformed body (400)."""
    with TestClient(build_app(tmp_path, deadline_seconds=None)) as client:
        for method, path, body in documented_examples():
            if path == "/api/games":
                continue  # creates a game: decoded and answered below
            url = path.replace("{game}", "nowhere").replace("{ship}", "Hope")
            answer = client.request(method, url, json=body)
            assert answer.status_code == 404, (method, path, answer.text)
        created = client.post("/api/games", json=dict(documented_examples()[0][2]))
        assert created.status_code == 201, created.text
