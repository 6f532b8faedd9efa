"""Fuzzing: random command sequences and random log lines against the engine.

Commands: for each ruleset, a strategy draws commands (valid and invalid kinds, squares, facings,
tokens, partial resolutions, ends); each is run through ``run_command`` on a real log. The engine
may refuse (a MortecouilleError or Conflict) but nothing else; a refused command leaves the log
byte for byte unchanged; the accepted log folds to the running state and ``verify`` (chain, turn
hashes, re-derivation) passes. A ruleset joins by adding one entry to ``COMMANDS`` (a strategy of
command sequences). Mortecouille sequences are whole games: a fleet bought, sealed and placed, then
random orders (valid and invalid actions, targets, positions, modes, replace flags), resolutions
(partial or not, with or without the seed to reveal) and rulings; 150 examples, 3000 in a soak.

Log reader: malformed JSON, unknown types, wrong field types, missing fields, huge numbers and
oversized strings give a CorruptLine (a LogError) naming the line, never a crash or a skip.

``MORTECOUILLE_SOAK=1`` runs twenty times more examples.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mortecouille.app.commands import run_command, store_seed
from mortecouille.core.blockade.rounds import BLOCKADE_KINDS
from mortecouille.core.board.ships import PlaceShip
from mortecouille.core.dice import TableDice, seed_commitment
from mortecouille.core.errors import MortecouilleError
from mortecouille.core.fleet.catalogue import CATALOGUES, RULES_VERSION
from mortecouille.core.game import decide, fold
from mortecouille.core.life_cycle import Command, CreateGame, EndGame, ResolveTurn
from mortecouille.core.state import EMPTY, GameState, state_hash
from mortecouille.core.turn_commands import GiveTokens
from mortecouille.events.board import Board
from mortecouille.events.codec import CorruptLine, LogError, decode_line
from mortecouille.events.game import GameEnded, TurnEnded
from mortecouille.events.storage.errors import Conflict
from mortecouille.events.storage.file_log import GameLog
from mortecouille.replays.reading.verify import verify_log
from tests.conftest import SEED, created_log

pytestmark = pytest.mark.slow

SOAK = os.environ.get("MORTECOUILLE_SOAK") == "1"
EXAMPLES = 3000 if SOAK else 300
FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=not SOAK
)

SHIPS = ("A", "B", "C", "D", "")
PLAYERS = ("Anne", "Bart", "Zed", "")
FACINGS = ("N", "E", "S", "W", "NE", "SW", "X", "")
squares = st.tuples(st.integers(-2, 11), st.integers(-2, 11))

place = st.builds(
    PlaceShip,
    ship=st.sampled_from(SHIPS),
    at=squares,
    facing=st.sampled_from(FACINGS),
    kind=st.sampled_from([*BLOCKADE_KINDS, "galleon", "", None]),
    owner=st.sampled_from([*PLAYERS, None]),
    damage=st.sampled_from([0, 0, 5, -1, 100]),
)
tokens = st.builds(
    GiveTokens,
    ship=st.sampled_from(SHIPS),
    tokens=st.lists(st.sampled_from(["F", "L", "R", None, "X", "f"]), max_size=5).map(tuple),
)
resolve = st.builds(ResolveTurn, partial=st.booleans(), rounds=st.sampled_from([None, None, 1, 4, 0, 5]))
end = st.builds(
    EndGame,
    winner=st.sampled_from([None, "Anne", "Zed"]),
    seed=st.sampled_from([SEED, SEED, "wrong"]),
)
valid_place = st.builds(
    PlaceShip,
    ship=st.sampled_from(SHIPS[:4]),
    at=st.tuples(st.integers(0, 9), st.integers(0, 9)),
    facing=st.sampled_from(FACINGS[:4]),
    kind=st.sampled_from(["sloop", "war-frigate", "junk"]),
    owner=st.sampled_from(["Anne", "Bart"]),
)
valid_tokens = st.builds(
    GiveTokens,
    ship=st.sampled_from(SHIPS[:4]),
    tokens=st.lists(st.sampled_from(["F", "L", "R", None]), min_size=1, max_size=4).map(tuple),
)
partial = st.builds(ResolveTurn, partial=st.just(True))
#: mostly valid commands, so that games get far (turns resolved, ships sunk); an end now and then
blockade_commands = st.one_of(
    valid_place, valid_place, place, valid_tokens, valid_tokens, valid_tokens, tokens, partial, resolve
) | st.one_of(*[valid_tokens] * 12, end)


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, drawn with these weights (``one_of`` flattens nested choices evenly)."""
    pool = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.sampled_from(pool).flatmap(lambda strategy: strategy)


def mortecouille_commands() -> st.SearchStrategy[list[Command]]:
    """Whole mortecouille games: a fleet bought, sealed and placed (or random purchases), then turns.

    Most sequences start with a valid set-up (both players buy two ships with options, seal and
    place them close together on the 10x10 board) so that the random orders, resolutions and
    rulings that follow get games far: shots, fire, catapults, collisions, fireships, sinkings,
    victories. Each part is drawn from valid and invalid values alike (actions, targets, firing
    positions, modes, manoeuvres, replace flags, partial resolutions, seeds, rule IDs, adjustments).
    """
    from mortecouille.core.fleet.commands import BuyShip, EquipFleet, EquipShip, SealFleet
    from mortecouille.core.rulings import RecordRuling
    from mortecouille.core.turn_commands import GiveOrder
    from mortecouille.events.orders import Advance, Attack, BecomeFireship, CatapultShot, Idle, Maneuver
    from mortecouille.events.rulings import Adjustment

    catalogue = CATALOGUES[RULES_VERSION]
    kinds = [*sorted(catalogue.ships), "nope"]
    options = [*sorted(catalogue.options), "nope"]
    ship_options = ["catapult", "flaming-shot", "siren", "super-shot", "extra-crew", "hull-1", "fireship",
                    "elite-gunner", "continuous-burst", "extra-sail", "slave"]  # fmt: skip
    buy = st.builds(
        BuyShip,
        player=st.sampled_from(PLAYERS),
        kind=st.sampled_from(kinds),
        name=st.sampled_from(SHIPS),
        options=st.lists(st.sampled_from(options), max_size=2).map(tuple),
    )
    equip = st.builds(EquipShip, ship=st.sampled_from(SHIPS), option=st.sampled_from(options))
    fleet = st.builds(EquipFleet, player=st.sampled_from(PLAYERS), option=st.sampled_from(options))
    seal = st.builds(SealFleet, player=st.sampled_from(PLAYERS), forfeit=st.booleans())
    valid_buy = st.builds(
        BuyShip,
        player=st.sampled_from(PLAYERS[:2]),
        kind=st.sampled_from(kinds[:-1]),
        name=st.sampled_from(SHIPS[:4]),
    )
    purchases = st.one_of(
        valid_buy, valid_buy, buy, equip, fleet, seal, seal, valid_place, place, valid_place
    )

    @st.composite
    def set_up(draw: st.DrawFn) -> list[Command]:
        """Two ships each, bought with options, sealed, placed in the middle of the board."""
        commands: list[Command] = []
        squares = draw(st.lists(st.tuples(st.integers(2, 7), st.integers(2, 7)), min_size=4, max_size=4,
                                unique=True))  # fmt: skip
        for index, name in enumerate(SHIPS[:4]):
            commands.append(
                BuyShip(
                    player=PLAYERS[index % 2], kind=draw(st.sampled_from(kinds[:-1])), name=name,
                    options=tuple(draw(st.lists(st.sampled_from(ship_options), max_size=3, unique=True))),
                )
            )  # fmt: skip
        if draw(st.booleans()):
            commands.append(
                EquipFleet(player="Anne", option=draw(st.sampled_from(["slave-fleet", "fireship-fleet"])))
            )
        commands += [SealFleet(player="Anne", forfeit=True), SealFleet(player="Bart", forfeit=True)]
        for name, at in zip(SHIPS[:4], squares, strict=True):
            commands.append(PlaceShip(ship=name, at=at, facing=draw(st.sampled_from(FACINGS[:6]))))
        return commands

    targets = st.sampled_from([*SHIPS, "Zed"])
    action = st.one_of(
        st.just(Advance()),
        st.just(Advance()),
        st.just(Idle()),
        st.just(BecomeFireship()),
        st.builds(
            Maneuver,
            turn=st.sampled_from(["1/8", "1/4", "1/2", "1/3", ""]),
            side=st.sampled_from(["left", "right", "up"]),
            sailing=st.booleans(),
        ),
        st.builds(
            Attack,
            position=st.sampled_from(["port", "starboard", "bow", "stern", "deck"]),
            target=targets,
            mode=st.sampled_from(["normal", "normal", "burst", "volley"]),
        ),
        st.builds(CatapultShot, target=targets),
    )
    order = st.builds(
        GiveOrder,
        ship=st.sampled_from([*SHIPS, "Zed"]),
        actions=st.lists(action, min_size=0, max_size=3).map(tuple),
        replace=st.booleans(),
    )
    valid_action = st.one_of(
        st.just(Advance()),
        st.builds(
            Attack,
            position=st.sampled_from(["port", "starboard", "bow", "stern"]),
            target=st.sampled_from(SHIPS[:4]),
            mode=st.sampled_from(["normal", "normal", "burst"]),
        ),
        st.builds(
            Maneuver,
            turn=st.sampled_from(["1/8", "1/4", "1/2"]),
            side=st.sampled_from(["left", "right"]),
            sailing=st.booleans(),
        ),  # fmt: skip
        st.builds(CatapultShot, target=st.sampled_from(SHIPS[:4])),
        st.just(BecomeFireship()),
        st.just(Idle()),
    )
    valid_order = st.builds(
        GiveOrder,
        ship=st.sampled_from(SHIPS[:4]),
        actions=weighted((4, st.tuples(valid_action)), (1, st.tuples(valid_action, valid_action))),
        replace=st.sampled_from([True, True, False]),
    )
    resolve_turn = st.builds(
        ResolveTurn,
        partial=st.sampled_from([True, True, False]),
        rounds=st.sampled_from([None, None, None, 1, 4]),
        reveal_seed=st.sampled_from([SEED, SEED, None, "wrong"]),
    )
    adjustment = st.builds(
        Adjustment,
        ship=st.sampled_from([*SHIPS, "Zed"]),
        damage=st.sampled_from([None, None, 5.0, -3.0, 60.0, 0.0]),
        at=st.sampled_from([None, None, (3, 3), (0, 9), (12, 1)]),
        facing=st.sampled_from([None, None, "E", "X"]),
        wind=st.sampled_from([None, None, 7, 0, -1]),
        sunk=st.sampled_from([None, None, None, False, True]),
    )
    ruling = st.builds(
        RecordRuling,
        rule=st.sampled_from(["A1", "M3", "X1", "Z9", ""]),
        text=st.sampled_from(["the referee decides", ""]),
        adjustments=st.lists(adjustment, max_size=2).map(tuple),
    )
    turn_command = weighted(
        (40, valid_order), (10, order), (30, resolve_turn), (10, ruling), (8, purchases), (1, end)
    )
    return st.builds(
        lambda prefix, rest: [*prefix, *rest],
        weighted((85, set_up()), (15, st.lists(purchases, max_size=12))),
        st.lists(turn_command, min_size=4, max_size=40),
    )


#: ruleset -> a strategy of command sequences (games), and how many examples to run of it.
COMMANDS: dict[str, st.SearchStrategy[list[Command]]] = {
    "blockade": st.lists(blockade_commands, min_size=1, max_size=25),
    "mortecouille": mortecouille_commands(),
}
EXAMPLES_OF = {"blockade": EXAMPLES, "mortecouille": 3000 if SOAK else 150}


def normalised(state: GameState) -> GameState:
    """The state as a log would give it back: ints in float fields become floats."""
    return msgspec.json.decode(msgspec.json.encode(state), type=GameState)


def test_the_running_state_of_a_cli_placement_hashes_as_its_replay(tmp_path: Path) -> None:
    log = created_log(tmp_path)
    store_seed(log, SEED)
    # damage given as the int 1, not the default: an int kept in a float field of the running state
    # would hash `1` there and `1.0` in the replay (defaults are left out of the hash)
    _, running = run_command(
        log, lambda s: PlaceShip(ship="A", at=(1, 1), facing="N", kind="sloop", damage=1)
    )
    assert running.ships["A"].damage == 1
    assert state_hash(running) == state_hash(fold(log.read()))


def play(ruleset: str, commands: list[Command]) -> Counter[str]:
    """Run the commands on a fresh real log and check every promise; return what happened, counted."""
    counts: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as scratch:
        log = GameLog(Path(scratch) / "f.jsonl")
        create = CreateGame(
            game="f", ruleset=ruleset, players=("Anne", "Bart"), budget=300000, board=Board(width=10, height=10),
            seed_sha256=seed_commitment(SEED), rules_version=RULES_VERSION,
        )  # fmt: skip
        log.create(decide(EMPTY, create, TableDice()))
        store_seed(log, SEED)
        state = fold(log.read())
        for command in commands:
            before = log.path.read_bytes()
            head_before = log.head_path.read_bytes()
            try:
                appended, state = run_command(log, lambda s, command=command: command)
            except (MortecouilleError, Conflict):
                assert log.path.read_bytes() == before, f"refused {command!r} changed the log"
                assert log.head_path.read_bytes() == head_before
                counts["refused"] += 1
                continue
            counts["accepted"] += 1
            assert log.path.read_bytes().startswith(before)
            counts["turns resolved"] += sum(isinstance(e, TurnEnded) for e in appended)
            counts["games won"] += sum(isinstance(e, GameEnded) and e.reason == "victory" for e in appended)
        folded = fold(log.read())
        assert state_hash(folded) == state_hash(normalised(state))
        report = verify_log(log)
        assert report.ok, [f for f in report.findings if not f.ok]
    return counts


@pytest.mark.parametrize("ruleset", sorted(COMMANDS))
def test_random_command_sequences_refuse_cleanly_and_replay(
    ruleset: str, capsys: pytest.CaptureFixture[str]
) -> None:
    totals: Counter[str] = Counter()

    @settings(FUZZ, max_examples=EXAMPLES_OF[ruleset])
    @given(COMMANDS[ruleset])
    def run(commands: list[Command]) -> None:
        totals.update(play(ruleset, commands))

    run()
    with capsys.disabled():
        print(f"\nfuzz {ruleset}: " + ", ".join(f"{key} {value}" for key, value in sorted(totals.items())))
    assert totals["accepted"] > 0 and totals["refused"] > 0, totals
    if ruleset == "mortecouille":  # the games got far: turns resolved, and some won
        assert totals["turns resolved"] >= 20, totals


VALID = (
    b'{"hash":"h","index":0,"phase":"wind","prev":"p","purpose":"wind","seq":1,"ship":null,'
    b'"sides":6,"source":"table","turn":1,"type":"die-rolled","v":1,"value":3}'
)
FIELDS: dict[str, Any] = msgspec.json.decode(VALID)

bad_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@st.composite
def bad_bodies(draw: st.DrawFn) -> dict[str, Any]:
    body = dict(FIELDS)
    for field in draw(st.lists(st.sampled_from(sorted(FIELDS)), min_size=1, max_size=3, unique=True)):
        if draw(st.booleans()):
            del body[field]
        else:
            body[field] = draw(bad_values)
    return body


def decodes_or_names_its_line(line: bytes, number: int) -> None:
    try:
        decode_line(line, number)
    except CorruptLine as error:
        assert str(error).startswith(f"line {number}: "), error
        assert error.line == number


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes_are_a_corrupt_line_or_an_event(line: bytes) -> None:
    decodes_or_names_its_line(line.replace(b"\n", b" "), 7)


@FUZZ
@given(bad_bodies())
def test_wrong_missing_or_huge_fields_name_the_line_and_the_field(body: dict[str, Any]) -> None:
    line = msgspec.json.encode(body)
    try:
        event = decode_line(line, 3)
    except CorruptLine as error:
        assert str(error).startswith("line 3: ")
        assert "type" in str(error) or "`" in str(error) or "JSON" in str(error), error
        return
    assert type(event).__struct_config__.tag == body["type"]  # type: ignore[attr-defined]


HUGE = 10 * 1024 * 1024


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (b"not json", "not a JSON object"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"type":"no-such","seq":4}', "unknown event type"),
        (b'{"seq":4}', "unknown event type"),
        (VALID.replace(b'"turn":1', b'"turn":"one"'), "turn"),
        (VALID.replace(b'"turn":1,', b""), "missing required field `turn`"),
        (VALID.replace(b'"value":3', b'"value":' + b"9" * 400), ""),
        (VALID.replace(b'"value":3', b'"value":' + b"9" * 5000), "Integer value out of range"),
        (VALID.replace(b'"v":1', b'"v":99'), "field `v`"),
        (VALID.replace(b'"source":"table"', b'"source":"' + b"x" * HUGE + b'"'), None),
        (
            VALID.replace(b'"source":"table"', b'"source":' + b"[" * 5000 + b"]" * 5000),
            "nested too deeply",
        ),
        (b"{" + b"\xff" * 10 + b"}", "not a JSON object"),
    ],
    ids=[
        "text",
        "array",
        "unknown",
        "no-type",
        "wrong-type",
        "missing",
        "big-int",
        "huge-int",
        "future-v",
        "10MB-string",
        "deep-nesting",
        "bad-utf8",
    ],  # fmt: skip
)
def test_the_log_reader_reports_malformed_lines_by_line_and_field(
    tmp_path: Path, line: bytes, says: str | None
) -> None:
    log = created_log(tmp_path)
    good = log.path.read_bytes()
    log.path.write_bytes(good + line + b"\n")
    if says is None:  # a 10 MB string is a valid (if odd) field: read, not truncated, not skipped
        events = log.read()
        assert len(events) == 2 and len(getattr(events[1], "source", "")) == HUGE
        return
    if not says:  # a 400-digit die value decodes exactly (nothing truncated); range is verify's job
        events = log.read()
        assert getattr(events[1], "value", None) == int("9" * 400)
        return
    with pytest.raises(LogError) as error:
        log.read()
    assert str(error.value).startswith("line 2: ") and says in str(error.value), error.value
    report = verify_log(log)  # verify reports it too, naming seq 1 (the chain breaks there first)
    assert not report.ok and report.first_failure is not None and report.first_failure.seq == 1
