"""Stamping writes every line with the bytes and hash of its definition (events/codec.py): the
canonical JSON of the event's fields with ``seq``, ``prev`` and ``hash``. An append stamps its
events by splicing the hash into one sorted encoding of the event; these tests hold
that path to the definition, line for line, over every event type of the golden logs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mortecouille.events.base import GENESIS_HASH
from mortecouille.events.codec import _stamp_by_splice, _stamp_through_dict, decode_lines, stamp, stamp_all
from mortecouille.events.game import TurnStarted
from mortecouille.events.rulings import Adjustment, RulingRecorded
from tests.helpers import GOLDEN

GOLDEN_LOGS = sorted(GOLDEN.rglob("*.jsonl"))


def test_every_event_of_the_golden_logs_stamps_alike_by_splice_and_by_dictionary() -> None:
    compared = 0
    for path in GOLDEN_LOGS:
        for event in decode_lines(path.read_bytes()):
            by_dict = _stamp_through_dict(event, 7, "a" * 64)
            by_splice = _stamp_by_splice(event, 7, "a" * 64)
            if by_splice is not None:
                assert by_splice == by_dict
                compared += 1
    assert compared > 100


def test_a_field_left_out_while_none_takes_the_dictionary_path() -> None:
    from mortecouille.events.game import GameCreated

    omitted = [event for path in GOLDEN_LOGS for event in decode_lines(path.read_bytes())
               if isinstance(event, GameCreated) and event.dice_scheme is None]  # fmt: skip
    assert omitted
    assert _stamp_by_splice(omitted[0], 0, GENESIS_HASH) is None
    assert b"dice_scheme" not in stamp(omitted[0], 0, GENESIS_HASH)[1]


@given(
    text=st.text(max_size=40),
    rule=st.text(min_size=1, max_size=8),
    ships=st.lists(st.text(max_size=10), max_size=3),
)
def test_any_ruling_text_stamps_alike_by_splice_and_by_dictionary(
    text: str, rule: str, ships: list[str]
) -> None:
    event = RulingRecorded(
        turn=2, rule=rule, text=text, adjustments=tuple(Adjustment(ship=ship, damage=1.5) for ship in ships)
    )
    assert stamp(event, 3, "b" * 64) == _stamp_through_dict(event, 3, "b" * 64)


def test_text_that_looks_like_the_hash_field_is_stamped_by_its_definition() -> None:
    event = RulingRecorded(turn=1, rule="T2", text='"hash":"",')
    assert stamp(event, 1, "c" * 64) == _stamp_through_dict(event, 1, "c" * 64)


def test_a_batch_chains_each_line_to_the_one_before() -> None:
    stamped, payload = stamp_all([TurnStarted(turn=1), TurnStarted(turn=2)], 5, "d" * 64)
    lines = payload.splitlines()
    assert [event.seq for event in stamped] == [5, 6]
    assert stamped[1].prev == stamped[0].hash
    assert lines[1] == _stamp_through_dict(TurnStarted(turn=2), 6, stamped[0].hash)[1]
