"""Commands for disputed turns: replay, explain, render, export, fork and ruling.

All but ``fork`` and ``ruling`` only read the log. ``fork`` writes a new game
and leaves the original untouched; ``ruling`` appends one event.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
import msgspec

from mortecouille.app.commands import run_command
from mortecouille.app.fork import fork_game
from mortecouille.app.games import game_log
from mortecouille.app.outputs import HTML_SUFFIXES, SVG_SUFFIXES, check_output, write_output
from mortecouille.app.requests.bodies import RulingRequest
from mortecouille.app.requests.commands import AT_THE_TABLE, builder, decode
from mortecouille.app.store_copy import turns_of
from mortecouille.app.turn_index import TurnLookups
from mortecouille.cli.ruling_grammar import adjustments as adjustments_typed
from mortecouille.cli.shared import Context, echo_lines, pass_context, reports_errors, typed_as
from mortecouille.core.board.geometry import square_name
from mortecouille.core.errors import BadInput
from mortecouille.core.life_cycle import ship_id_typed
from mortecouille.core.limits import DICE_MODES, shown
from mortecouille.core.narration import ExplainContext, position_caption
from mortecouille.core.rulings import describe_adjustment
from mortecouille.core.state import GameState, state_hash
from mortecouille.events.base import Event
from mortecouille.events.rulings import RulingRecorded
from mortecouille.events.storage.contract import events_from
from mortecouille.replays.pictures.board_text import render_board
from mortecouille.replays.pictures.html import page_parts
from mortecouille.replays.pictures.turns import turn_picture
from mortecouille.replays.reading.describe import describe_event
from mortecouille.replays.reading.explain import (
    explain_text,
    explain_turn,
    narrate,
    story_span,
)
from mortecouille.replays.reading.replay import Replay, position_after_turn, position_of_seq, resolved_turns

#: keys of the interactive stepper (click.getchar gives arrows as escape sequences)
NEXT_KEYS = frozenset({" ", "\x1b[C", "l", "n", "\r"})
PREVIOUS_KEYS = frozenset({"\x1b[D", "\x7f", "\x08", "h", "p"})
QUIT_KEYS = frozenset({"q", "Q", "\x03", "\x1b"})


def read_events(ctx: Context, game: str) -> list[Event]:
    return game_log(ctx.store, game).read()


def start_position(events: Sequence[Event], turn: int | None, seq: int | None) -> int:
    if turn is not None and seq is not None:
        raise BadInput("--turn/--seq", "give one of --turn and --seq, not both")
    if seq is not None:
        try:
            return position_of_seq(events, seq)
        except ValueError as error:
            raise BadInput("--seq", str(error)) from None
    if turn is not None:
        resolved = len(resolved_turns(events))
        if not 0 <= turn <= resolved:
            raise BadInput("--turn", f"{turn} is not a resolved turn: 0 (before the first) to {resolved}")
        return position_after_turn(events, turn)
    return len(events)


def indexed_position(index: TurnLookups, turn: int | None, seq: int | None) -> int:
    """:func:`start_position` read from a turn index: the same positions and refusals."""
    if turn is not None and seq is not None:
        raise BadInput("--turn/--seq", "give one of --turn and --seq, not both")
    if seq is not None:
        if not 0 <= seq < index.end:
            raise BadInput("--seq", f"seq {seq} is not in the log (0..{index.end - 1})")
        return seq + 1
    if turn is not None:
        resolved = len(index.resolved_turns())
        if not 0 <= turn <= resolved:
            raise BadInput("--turn", f"{turn} is not a resolved turn: 0 (before the first) to {resolved}")
        return index.position_after_turn(turn)
    return index.end


def rulings_until(events: Sequence[Event], position: int) -> list[RulingRecorded]:
    return [e for e in events[:position] if isinstance(e, RulingRecorded)]


def ship_summary(state: GameState) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for ship in sorted(state.ships.values(), key=lambda s: s.id):
        status = "sunk" if ship.sunk else "lost" if ship.lost else "gone" if ship.gone else "afloat"
        summary[ship.id] = {
            "at": square_name(ship.at) if ship.at is not None else None,
            "facing": ship.facing, "damage": ship.damage, "status": status,
            "wind": ship.wind, "fire": ship.fire, "countdown": ship.countdown,
        }  # fmt: skip
    return summary


def position_text(replay: Replay) -> str:
    """The board at the cursor: what led there, the board and ship list, rulings in force."""
    return position_lines(replay.state, replay.current_event(), rulings_until(replay.events, replay.position))


#: The rulings a position's text shows, the latest ones: a table makes a handful in a game, but a
#: long one can gather thousands (a wreck refloated by ruling each turn), which would bury the
#: board; the JSON output keeps them all.
SHOWN_RULINGS = 20


def position_lines(state: GameState, event: Event | None, rulings: Sequence[RulingRecorded]) -> str:
    """The board at a position: the event that led there (None: the start), the board and ship
    list, and the latest rulings made up to there (:data:`SHOWN_RULINGS`)."""
    where = f"seq {event.seq}" if event is not None else "the start (no event applied)"
    caption = position_caption(state).render()
    lines = [shown(f"{state.game or '?'} at {where}; {caption}; state hash {state_hash(state)[:12]}")]
    if event is not None:
        # one hash per position: a turn-ended's own hash is of the position before the turn
        # counter moved on, a second number for the same place, so it is left to ``log``
        lines.append("last event: " + describe_event(event, hide=("state_hash",)).strip())
    if state.created:
        lines.append(render_board(state))
    earlier = len(rulings) - SHOWN_RULINGS
    if earlier > 0:
        lines.append(f"{earlier:,} earlier ruling(s) not shown (replay --json lists them all)")
    for ruling in rulings[-SHOWN_RULINGS:]:
        effects = "; ".join(describe_adjustment(a).render() for a in ruling.adjustments) or "no change"
        lines.append(shown(f"ruling seq {ruling.seq} [{ruling.rule}]: {ruling.text} -> {effects}"))
    return "\n".join(lines)


def step_record(replay: Replay, before: GameState) -> dict[str, Any]:
    """One step as JSON: the event, its story line and the state it leads to."""
    event = replay.current_event()
    assert event is not None
    line = narrate(event, ExplainContext(before, replay.state), replay.state.ruleset)
    return {
        "seq": event.seq,
        "type": type(event).__struct_config__.tag,
        "event": msgspec.to_builtins(event),
        "text": line.text,
        "rules": list(line.rules),
        "turn": replay.state.turn,
        "state_hash": state_hash(replay.state),
        "ships": ship_summary(replay.state),
    }


def step_interactively(
    replay: Replay, first: int, last: int, getchar: Callable[[], str], show: Callable[[str], None]
) -> int:
    """Walk positions first..last with the keyboard; return the position the referee left at."""
    replay.seek(first)
    while True:
        help_line = "space/right: next   left/backspace: previous   q: quit"
        show(f"step {replay.position - first} of {last - first}   ({help_line})\n" + position_text(replay))
        key = getchar()
        if key in QUIT_KEYS:
            return replay.position
        if key in NEXT_KEYS and replay.position < last:
            replay.step(1)
        elif key in PREVIOUS_KEYS and replay.position > first:
            replay.step(-1)


def step_range(events: Sequence[Event], turn: int | None, seq: int | None) -> tuple[int, int]:
    if turn is not None and turn > 0:
        first, last = story_span(events, turn)
        return first, last
    if seq is not None:
        return start_position(events, None, seq), len(events)
    return 0, len(events)


@click.command()
@click.argument("game")
@click.option("--turn", type=int, default=None, help="The position turn N left (0: before turn 1).")
@click.option("--seq", type=int, default=None, help="The position just after event SEQ.")
@click.option("--step", is_flag=True, help="Walk event by event (the turn's events with --turn).")
@click.option("--json", "as_json", is_flag=True, help="JSON; with --step one object per line.")
@pass_context
@reports_errors
def replay(ctx: Context, game: str, turn: int | None, seq: int | None, step: bool, as_json: bool) -> None:
    """The state of GAME at any point, or walked through event by event (--step)."""
    if not step:
        # one position: from the turn index's keyframe before it, whatever the log's length
        with turns_of(game_log(ctx.store, game)) as index:
            position = indexed_position(index, turn, seq)
            state, event = index.state_at(position)
            rulings = index.rulings_until(position)
            index.keep()
        if as_json:
            body = {
                "game": state.game, "position": position,
                "seq": position - 1, "turn": state.turn,
                "state_hash": state_hash(state), "state": msgspec.to_builtins(state),
                "rulings": [msgspec.to_builtins(r) for r in rulings],
            }  # fmt: skip
            click.echo(msgspec.json.encode(body).decode())
        else:
            click.echo(position_lines(state, event, rulings))
        return
    events = read_events(ctx, game)
    engine = Replay(events)
    first, last = step_range(events, turn, seq)
    if as_json or not sys.stdout.isatty():
        engine.seek(first)
        while engine.position < last:
            before = engine.state
            engine.step(1)
            click.echo(msgspec.json.encode(step_record(engine, before)).decode())
        return

    def show(text: str) -> None:
        click.clear()
        click.echo(text)

    step_interactively(engine, first, last, click.getchar, show)


@click.command()
@click.argument("game")
@click.option("--turn", type=int, required=True, help="The resolved turn to tell.")
@click.option("--ship", default=None, help="Keep only the lines about this ship.")
@click.option("--json", "as_json", is_flag=True, help="A list of {seq, phase, ships, text, rules}.")
@pass_context
@reports_errors
def explain(ctx: Context, game: str, turn: int, ship: str | None, as_json: bool) -> None:
    """Turn N of GAME as a story: phases, dice, claims and collisions with their rule IDs."""
    with turns_of(game_log(ctx.store, game)) as index:
        state = index.final
        if ship is not None:
            ship = ship_id_typed(state, ship)  # as place reads a name: case and spacing aside
            if ship not in state.ships:
                known = ", ".join(sorted(state.ships)) or "none"
                raise BadInput("--ship", f"no ship {ship!r} in {game!r}: {known}")
        # the turn's story only, from the keyframe before it: the same lines as from the whole log
        first, last = index.story_span(turn)
        base, story = index.span(first, last)
        lines = explain_turn(story, turn, ship, base=base, span=(0, len(story)))
        index.keep()
    if as_json:
        click.echo(msgspec.json.encode(lines).decode())
        return
    who = f", {ship} only" if ship else ""
    click.echo(f"{game}, turn {turn}{who}")
    click.echo(explain_text(lines))


@click.command()
@click.argument("game")
@click.option("--turn", type=int, required=True, help="The turn to draw (0: the board before turn 1).")
@click.option("--svg", "svg_path", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--force", is_flag=True, help="Replace the --svg file if it exists.")
@pass_context
@reports_errors
def render(ctx: Context, game: str, turn: int, svg_path: Path, force: bool) -> None:
    """Draw turn N of GAME as SVG: the board, ships, paths, collisions and shots."""
    check_output(svg_path, "--svg", ctx.games_directory, force, SVG_SUFFIXES)
    # read as a stream, and only as far as the turn drawn
    svg = turn_picture(events_from(game_log(ctx.store, game), 0), turn)
    write_output(svg_path, svg, "--svg", ctx.games_directory, force, SVG_SUFFIXES)
    click.echo(f"wrote {svg_path}")


@click.command()
@click.argument("game")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--force", is_flag=True, help="Replace the --html file if it exists.")
@pass_context
@reports_errors
def export(ctx: Context, game: str, html_path: Path, force: bool) -> None:
    """The whole of GAME as one self-contained HTML page: board, turn slider, explanations."""
    check_output(html_path, "--html", ctx.games_directory, force, HTML_SUFFIXES)
    # the log read twice as a stream (its final state, then its turns): the page is written turn
    # by turn, never held whole, nor the decoded log
    log_ = game_log(ctx.store, game)
    page = page_parts(lambda: events_from(log_, 0))
    write_output(html_path, page, "--html", ctx.games_directory, force, HTML_SUFFIXES)
    click.echo(f"wrote {html_path}")


@click.command()
@click.argument("game")
@click.argument("new_game", metavar="NEWGAME")
@click.option("--at", "at_seq", type=int, required=True, help="The last seq to copy (a command boundary).")
@click.option("--dice", "dice_mode", type=click.Choice(DICE_MODES), default=None)
@click.option("--seed", default=None, help="The fork's secret seed (default: a fresh random one).")
@click.option(
    "--weak-seed", is_flag=True, help="Accept a --seed shorter than 16 characters (tests, demos): guessable."
)
@pass_context
@reports_errors
def fork(
    ctx: Context,
    game: str,
    new_game: str,
    at_seq: int,
    dice_mode: str | None,
    seed: str | None,
    weak_seed: bool,
) -> None:
    """What-if: copy GAME's log up to --at SEQ into NEWGAME, which records where it came from."""
    events, mode = fork_game(ctx.store, game, new_game, at_seq, dice_mode, seed, weak_seed=weak_seed)
    click.echo(f"forked {game} at seq {at_seq} into {new_game} ({len(events)} events, {mode} dice)")


@click.command()
@click.argument("game")
@click.option("--rule", required=True, help="The RULES.md ID the ruling rests on, e.g. M3 (case aside).")
@click.option("--text", required=True, help="What was decided, and why.")
@click.option(
    "--adjust", "adjustments", type=(str, str), multiple=True, metavar="SHIP CHANGE",
    help="damage=+N|damage=-N|position=SQUARE|facing=F|wind=N|sunk=false (repeatable).",
)  # fmt: skip
@click.option("--expect-seq", type=int, default=None, help="Refuse unless the log is at this seq.")
@pass_context
@reports_errors
def ruling(
    ctx: Context,
    game: str,
    rule: str,
    text: str,
    adjustments: tuple[tuple[str, str], ...],
    expect_seq: int | None,
) -> None:
    """Record a referee's ruling on GAME as an event, adjusting ships if it says so."""
    with typed_as({"rule": "--rule", "text": "--text", "adjust": "--adjust"}):
        typed = {"rule": rule, "text": text, "adjust": adjustments_typed(adjustments)}
        request = decode(RulingRequest, typed)
        command = builder(AT_THE_TABLE, request)
        outcome = run_command(game_log(ctx.store, game), command, expected_seq=expect_seq)
    echo_lines(outcome.lines())


COMMANDS: tuple[click.Command, ...] = (replay, explain, render, export, fork, ruling)
