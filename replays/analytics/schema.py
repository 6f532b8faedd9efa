"""The archive's tables (see :mod:`mortecouille.replays.analytics.archive`): every column and its DuckDB
type, the Hive
partition columns, and the README that documents them for the archive's readers.

:data:`TABLES` is the one source of the schema: the writer
(:mod:`mortecouille.replays.analytics.archive`), the row
builders (:mod:`mortecouille.replays.analytics.rows`), the empty views of a young archive
(:mod:`mortecouille.replays.analytics.query`) and the README all read it.
"""

from __future__ import annotations

#: Hive partition columns, in directory order; every table has them.
PARTITION_COLUMNS: tuple[str, ...] = ("ruleset", "month")

Columns = tuple[tuple[str, str], ...]

#: Every table's columns and DuckDB types, without the partition columns. The one source of the
#: schema: the writer, the empty views of a young archive and the README all read it.
TABLES: dict[str, Columns] = {
    "games": (
        ("game", "VARCHAR"),
        ("players", "VARCHAR[]"),
        ("budget", "BIGINT"),
        ("board_width", "INTEGER"),
        ("board_height", "INTEGER"),
        ("rules_version", "VARCHAR"),
        ("dice_mode", "VARCHAR"),
        ("forked_from", "VARCHAR"),
        ("scenario", "BOOLEAN"),
        ("turns", "INTEGER"),
        ("winner", "VARCHAR"),
        ("end_reason", "VARCHAR"),
        ("events", "BIGINT"),
        ("last_hash", "VARCHAR"),
    ),
    "events": (
        ("game", "VARCHAR"),
        ("seq", "BIGINT"),
        ("turn", "INTEGER"),
        ("type", "VARCHAR"),
        ("ship", "VARCHAR"),
        ("payload", "VARCHAR"),
    ),
    "dice": (
        ("game", "VARCHAR"),
        ("seq", "BIGINT"),
        ("turn", "INTEGER"),
        ("phase", "VARCHAR"),
        ("ship", "VARCHAR"),
        ("purpose", "VARCHAR"),
        ("index", "INTEGER"),
        ("sides", "INTEGER"),
        ("value", "INTEGER"),
        ("source", "VARCHAR"),
    ),
    "shots": (
        ("game", "VARCHAR"),
        ("seq", "BIGINT"),
        ("turn", "INTEGER"),
        ("ship", "VARCHAR"),
        ("weapon", "VARCHAR"),
        ("target", "VARCHAR"),
        ("distance", "INTEGER"),
        ("cannons", "INTEGER"),
        ("mode", "VARCHAR"),
        ("dice", "INTEGER[]"),
        ("bonus", "INTEGER"),
        ("needed", "VARCHAR"),
        ("needed_total", "INTEGER"),
        ("hit", "BOOLEAN"),
        ("damage", "INTEGER"),
        ("flaming", "BOOLEAN"),
    ),
    "collisions": (
        ("game", "VARCHAR"),
        ("seq", "BIGINT"),
        ("turn", "INTEGER"),
        ("round", "INTEGER"),
        ("phase", "VARCHAR"),
        ("step", "INTEGER"),
        ("rule", "VARCHAR"),
        ("ship_a", "VARCHAR"),
        ("ship_b", "VARCHAR"),
        ("square_x", "INTEGER"),
        ("square_y", "INTEGER"),
        ("rock_x", "INTEGER"),
        ("rock_y", "INTEGER"),
    ),
    "damage": (
        ("game", "VARCHAR"),
        ("seq", "BIGINT"),
        ("turn", "INTEGER"),
        ("round", "INTEGER"),
        ("phase", "VARCHAR"),
        ("ship", "VARCHAR"),
        ("amount", "DOUBLE"),
        ("cause", "VARCHAR"),
        ("other", "VARCHAR"),
        ("rules", "VARCHAR[]"),
    ),
    "fires": (
        ("game", "VARCHAR"),
        ("seq", "BIGINT"),
        ("turn", "INTEGER"),
        ("ship", "VARCHAR"),
        ("phase", "VARCHAR"),
        ("die", "INTEGER"),
        ("out", "BOOLEAN"),
        ("damage", "INTEGER"),
        ("next_phase", "VARCHAR"),
        ("abandoned", "BOOLEAN"),
    ),
    "ships": (
        ("game", "VARCHAR"),
        ("owner", "VARCHAR"),
        ("ship", "VARCHAR"),
        ("kind", "VARCHAR"),
        ("options", "VARCHAR[]"),
        ("fleet_options", "VARCHAR[]"),
        ("price", "BIGINT"),
        ("damage", "DOUBLE"),
        ("damage_dealt", "DOUBLE"),
        ("status", "VARCHAR"),
        ("won", "BOOLEAN"),
    ),
    "rulings": (
        ("game", "VARCHAR"),
        ("seq", "BIGINT"),
        ("turn", "INTEGER"),
        ("rule", "VARCHAR"),
        ("text", "VARCHAR"),
        ("adjustments", "INTEGER"),
    ),
}

# ------------------------------------------------------------------ README

_DESCRIPTIONS: dict[str, str] = {
    "games": "one row per archived game: its creation, how long it lasted, who won and why",
    "events": "every log line: `payload` is the exact canonical JSON line (its `hash` re-checkable "
    "with SHA-256); `turn` and `ship` are null for events without them",
    "dice": "every die (die-rolled): `index` counts this ship's rolls for this purpose in this phase; "
    "`source` is seeded, table or fixed",
    "shots": "every cannon volley or catapult shot (shot-fired): `mode` normal, burst or catapult; "
    "`needed` the total to reach or hit/miss when automatic (then `needed_total` is null and `dice` "
    "empty); `bonus` the S6 superiority bonus",
    "collisions": "every collision (rules M, C): two ships, or one ship (`ship_b` null) against a rock "
    "or the board's edge, `rock_x`/`rock_y` then being the square it claimed (off the board for the "
    "edge); `square_x`/`square_y` where it happened",
    "damage": "every loss (damage): `cause` ram, rock, shot, catapult, fire, wear, explosion...; "
    "`other` the ship that caused it, when one did",
    "fires": "every fire check at upkeep (fire-checked, X1): `next_phase` null when the fire is out "
    "or the crew abandoned the ship",
    "ships": "every ship as the game ended: individual `options` and the owner's `fleet_options`, "
    "`price` paid for the ship and its own options (F1-F2), `damage` taken, `damage_dealt` (damage "
    "rows naming it as `other`), `status` sunk, lost (abandoned), gone or afloat, `won` its owner won",
    "rulings": "every referee ruling: the rule it rests on, its text and how many adjustments it made",
}


def readme_text() -> str:
    lines = [
        "# Mortecouille game archive",
        "",
        "Plain Parquet files, hive-partitioned: `TABLE/ruleset=R/month=YYYY-MM/part-BATCH-N.parquet`.",
        "`ruleset` and `month` are partition columns (in the directory names, not in the files); "
        "`month` is when the game was archived. Any Parquet reader works, no project code needed:",
        "",
        "```sql",
        "SELECT * FROM read_parquet('ARCHIVE/shots/**/*.parquet', hive_partitioning = true);",
        "```",
        "",
        "`logs/GAME.jsonl` is each game's verified log, byte for byte (canonical JSON lines, each with",
        "`hash` = SHA-256 of the line without `hash`, chained by `prev`); `manifest.json` lists the",
        "archived games with their last hash.",
        "",
    ]
    for table, columns in TABLES.items():
        lines += [f"## {table}", "", _DESCRIPTIONS[table] + ".", "", "| column | type |", "|---|---|"]
        lines += [f"| {name} | {kind} |" for name, kind in columns]
        lines += [f"| {name} | VARCHAR (partition) |" for name in PARTITION_COLUMNS]
        lines.append("")
    return "\n".join(lines)
