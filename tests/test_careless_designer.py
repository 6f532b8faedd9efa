"""What a hurried game designer gets wrong in ``simulate --fleets FILE``: each refusal names the
option and where in the file the mistake is, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_helpers import run_cli, tree_digest


def test_a_fleets_file_with_an_unknown_kind_is_refused_naming_the_option_and_the_ship(tmp_path: Path) -> None:
    fleets = tmp_path / "fleets.json"
    fleets.write_text(json.dumps({"Anne": [{"kind": "red-small", "name": "Hope"}, {"kind": "purple", "name": "H"}],
                                  "Bart": [{"kind": "red-small", "name": "K"}]}))  # fmt: skip
    sims = tmp_path / "sims"
    result = run_cli("simulate", "--games", "1", "--seed", "s", "--fleets", str(fleets), "--to", str(sims))
    assert result.exit_code == 2, result.output
    assert "--fleets" in result.output and "Anne[1].kind" in result.output and "'purple'" in result.output
    assert tree_digest(sims) == tree_digest(tmp_path / "nothing")


def test_a_query_duckdb_refuses_shows_its_message_on_lines_of_their_own_with_the_caret_in_place(
    tmp_path: Path,
) -> None:
    logs = tmp_path / "logs"
    assert run_cli("simulate", "--games", "1", "--seed", "s", "--to", str(logs)).exit_code == 0
    result = run_cli("query", "--logs", str(logs), "SELECT nope FROM events")
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("error: SQL: Binder Error:") and "\\x0a" not in result.output
    statement = next(line for line in lines if "LINE 1: SELECT nope FROM events" in line)
    caret = lines[lines.index(statement) + 1]
    assert caret.index("^") == statement.index("nope")  # under the column DuckDB could not bind
