"""The snapshot's encoding (app/snapshots.py): a state is kept with its default fields left out,
which decoding fills back in, so that a read command decodes fewer keys. What comes
back must be the very state: equal, with the same state hash, and the same output."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from mortecouille.app.snapshots import decode_state, encode_state, encode_state_compact
from mortecouille.core.game import fold
from mortecouille.core.state import state_hash, without_defaults
from mortecouille.events.storage.file_log import GameLog
from tests.helpers import GOLDEN

NAMES = sorted(path.stem for path in GOLDEN.glob("*.jsonl"))


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(NAMES), cut=st.floats(min_value=0, max_value=1))
def test_a_snapshot_leaves_defaults_out_and_decodes_to_the_same_state_and_output(
    name: str, cut: float
) -> None:
    events = GameLog(GOLDEN / f"{name}.jsonl").read()
    state = fold(events[: round(cut * len(events))])
    back = decode_state(encode_state_compact(state))
    assert back == state
    assert state_hash(back) == state_hash(state)
    # what `state --json` and every other output is made from: the same values of the same types
    assert msgspec.json.encode(back) == msgspec.json.encode(state)
    assert len(encode_state_compact(state)) <= len(encode_state(state))


def test_a_snapshot_written_in_the_full_encoding_still_decodes() -> None:
    """Snapshots kept before the compact encoding (the same format version) read as they were."""
    state = fold(GameLog(GOLDEN / f"{NAMES[0]}.jsonl").read())
    assert decode_state(encode_state(state)) == decode_state(encode_state_compact(state)) == state


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(NAMES), cut=st.floats(min_value=0, max_value=1))
def test_the_compact_encoding_is_the_encoding_of_what_without_defaults_gives(name: str, cut: float) -> None:
    """The ships are left out of their defaults by a faster path than ``without_defaults``: the
    same bytes, whatever the ships hold."""
    events = GameLog(GOLDEN / f"{name}.jsonl").read()
    state = fold(events[: round(cut * len(events))])
    assert encode_state_compact(state) == msgspec.msgpack.encode(without_defaults(state))
