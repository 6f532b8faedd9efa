"""``mortecouille``: the referee's command line. Thin: parse the arguments, call the application
(mortecouille.app), print what it returns.

The group below is given its commands explicitly, from ``COMMANDS``: a command exists because it
is listed there, not because its module was imported.

Exit codes: 0 ok, 2 bad input or a rule refusal (the message names the field
or rule ID), 3 conflict or lock, 4 corrupt or tampered log; 1 interrupted, a file
the system would not read or write, or an unexpected error (one line, no traceback).
"""

from __future__ import annotations

import gc

# Start-up: the imports below create tens of thousands of objects that live as long as
# the process (modules, classes, functions, msgspec types), and the cyclic garbage collector,
# run every few hundred allocations, would walk them again and again: during these imports and
# in every full collection after them (while a command decodes and folds). So the collector waits
# while they are made, then they are frozen (``gc.freeze``: never walked again, never garbage)
# and it runs as before for everything a command allocates. Its state is restored even if an
# import fails.
_COLLECTING = gc.isenabled()
gc.disable()
try:
    import errno
    import importlib
    from collections.abc import Iterator, MutableMapping, Sequence
    from typing import overload

    import click

    from mortecouille.cli import interrupts
    from mortecouille.cli.plain import configure_logging, system_refusal, unexpected
    from mortecouille.cli.shared import (
        GAMES_DIR_HELP,
        LOG_JSON_HELP,
        STORE_HELP,
        VERBOSE_HELP,
        Context,
        fail,
        with_global_options,
    )
    from mortecouille.events.house_log import get_logger
finally:
    gc.freeze()
    if _COLLECTING:
        gc.enable()

__all__ = ["COMMANDS", "COMMAND_TABLE", "cli", "main"]

#: Every command of ``mortecouille``: its name, the module of ``mortecouille.cli`` that defines it
#: (in that module's ``COMMANDS``) and its one-line summary for ``--help``. A command's module is
#: imported only when the command runs (``state`` need not import the analytics, the
#: service or the renderers); ``--help`` prints the summaries without importing any, and
#: tests/test_startup_imports.py checks they are the commands' own.
COMMAND_TABLE: tuple[tuple[str, str, str], ...] = (
    ("new", "new_command", "Create GAME: its first event commits to the rules version and the dice seed."),
    ("log", "game_commands", "Print GAME's events."),
    ("state", "game_commands", "Print GAME's current state (the fold of its log)."),
    (
        "verify",
        "game_commands",
        "Check GAME's hash chain, dice and recorded outcomes, and the receipts and head codes given.",
    ),
    ("end", "game_commands", "End GAME and reveal its seed (D2)."),
    (
        "repair",
        "game_commands",
        "Cut a torn last line (left by a crash mid-append) off GAME's log, after showing it.",
    ),
    ("buy", "fleet_commands", "PLAYER buys a ship of KIND called NAME, with its options (F1-F3)."),
    (
        "unbuy",
        "fleet_commands",
        "Withdraw the purchase of SHIP, refunding it and its options, before its fleet is sealed (F3).",
    ),
    (
        "equip",
        "fleet_commands",
        "Fit OPTION to the bought ship SHIP, or with --fleet buy it for all of PLAYER's ships (F2).",
    ),
    ("seal", "fleet_commands", "Close PLAYER's purchases so the ships can be placed (F3)."),
    (
        "sheet",
        "fleet_commands",
        "The fiche d'état (F4) of every fleet, of one PLAYER's, or of one SHIP within its fleet.",
    ),
    (
        "audit",
        "fleet_commands",
        "Price every fleet again from GAME's purchases against its rules version (F3).",
    ),
    ("place", "board_commands", "Put SHIP on SQUARE, a name such as C5, with its --facing (B1, B2)."),
    (
        "tokens",
        "board_commands",
        "Give a blockade SHIP its TOKENS for this turn, one per round: F, L, R or - (P1).",
    ),
    (
        "resolve",
        "board_commands",
        "Resolve the current turn (P1 / T2) and print what happened, with rule IDs.",
    ),
    ("board", "board_commands", "Draw GAME's board: ships with facing arrows, rocks, wind, whirlpools."),
    ("scenario", "board_commands", "Resolve the one-turn situation in FILE.json and print its outcome."),
    ("order", "order_commands", "Give SHIP its orders for this turn: ACTION [+ ACTION ...] (T1)."),
    ("actions", "actions_command", "The orders SHIP may be given now, with wind costs and odds (T1)."),
    (
        "unorder",
        "order_commands",
        "Withdraw SHIP's orders for this turn before it is resolved: SHIP has no orders again (T1).",
    ),
    (
        "replay",
        "replay_commands",
        "The state of GAME at any point, or walked through event by event (--step).",
    ),
    (
        "explain",
        "replay_commands",
        "Turn N of GAME as a story: phases, dice, claims and collisions with their rule IDs.",
    ),
    (
        "render",
        "replay_commands",
        "Draw turn N of GAME as SVG: the board, ships, paths, collisions and shots.",
    ),
    (
        "export",
        "replay_commands",
        "The whole of GAME as one self-contained HTML page: board, turn slider, explanations.",
    ),
    (
        "fork",
        "replay_commands",
        "What-if: copy GAME's log up to --at SEQ into NEWGAME, which records where it came from.",
    ),
    (
        "ruling",
        "replay_commands",
        "Record a referee's ruling on GAME as an event, adjusting ships if it says so.",
    ),
    (
        "odds",
        "rules_commands",
        "Exact chance to hit, by enumerating every throw; without --distance, the whole S3, S4 and K tables.",
    ),
    (
        "demo",
        "demo_command",
        "Play a whole seeded game between two bots and print the winner, the board and a summary.",
    ),
    (
        "archive",
        "analytics_commands",
        "Verify every finished game and add it to a Parquet archive (idempotent).",
    ),
    (
        "query",
        "analytics_commands",
        "Run read-only SQL over an archive's tables (games, events, dice, shots, collisions, "
        "damage, fires, ships, rulings).",
    ),
    (
        "report",
        "analytics_commands",
        "A built-in report: dice (chi-square), gunnery (against S3/S4/K odds), fire, fleets, rulings.",
    ),
    (
        "simulate",
        "analytics_commands",
        "The built-in bots play COUNT complete seeded games, each a normal verifiable log.",
    ),
    (
        "games",
        "referee_commands",
        "List the games of the store: ruleset, turn, status, whose orders are missing.",
    ),
    (
        "prices",
        "referee_commands",
        "The price list: every ship kind and option with its price and names (F1, F2).",
    ),
    (
        "seats",
        "seat_commands",
        "GAME's seats: without --reissue, which seats have a link (a link is shown only when issued).",
    ),
    (
        "export-log",
        "store_commands",
        "GAME's log as JSON lines, byte for byte as a file store holds it (same hashes), from any "
        "store; checked against the store's head first (exit 4 if it is corrupt or tampered).",
    ),
    ("store", "store_commands", "Work on whole stores: copy games from one store to another."),
    (
        "serve",
        "serve_command",
        "Run the game service on the store of games: the table, player and referee pages, the "
        "JSON API and live push (docs/service.md).",
    ),
)

#: The commands that take Ctrl-C themselves (``cli.interrupts.stops_with``): ``query`` exits 130.
TAKE_CTRL_C_THEMSELVES: frozenset[str] = frozenset({"query"})

_MODULE_OF: dict[str, str] = {name: module for name, module, _ in COMMAND_TABLE}
_SUMMARY_OF: dict[str, str] = {name: summary for name, _, summary in COMMAND_TABLE}


def _load_command(name: str) -> click.Command:
    """The command ``name`` from its module, given the global options (once: the group keeps it)."""
    module = importlib.import_module(f"mortecouille.cli.{_MODULE_OF[name]}")
    found = [command for command in module.COMMANDS if command.name == name]
    if len(found) != 1:
        raise LookupError(f"mortecouille.cli.{_MODULE_OF[name]}.COMMANDS has no single command {name!r}")
    return with_global_options(found[0])


class _TableCommands(MutableMapping[str, click.Command]):
    """The group's commands by name: every name of :data:`COMMAND_TABLE` is there from the start
    (``name in cli.commands``, listing them, ``--help``), and each command is imported from its
    module the first time it is looked up."""

    def __init__(self) -> None:
        self._loaded: dict[str, click.Command] = {}

    def loaded(self, name: str) -> click.Command | None:
        """The command ``name`` if its module was imported already, without importing it."""
        return self._loaded.get(name)

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            if name not in _MODULE_OF:
                raise KeyError(name)
            self._loaded[name] = _load_command(name)
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in _MODULE_OF or name in self._loaded

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*_MODULE_OF, *self._loaded]))

    def __len__(self) -> int:
        return len({*_MODULE_OF, *self._loaded})


class RefereeGroup(click.Group):
    """The group that keeps every traceback from the user: a command's deliberate errors are
    reported by ``reports_errors``; what is left becomes one line and exit 1 (README, exit
    codes), the traceback going to the debug log (``-vv``).

    Its commands come from :data:`COMMAND_TABLE` (:class:`_TableCommands`), each imported the
    first time it is asked for."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's listing, with the table's summary for a command not imported yet (the same line
        its own help gives), so ``--help`` imports no command module."""
        rows: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            if isinstance(self.commands, _TableCommands):
                command = self.commands.loaded(name) or click.Command(name, help=_SUMMARY_OF.get(name))
            else:
                command = self.commands[name]
            if not command.hidden:
                rows.append((name, command))
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in rows])

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise  # click's own: usage errors exit 2, Ctrl-C and end of input "Aborted!" exit 1
        except OSError as error:
            if error.errno == errno.EPIPE:
                raise  # ``log | head -1``: click's main closes stdout quietly
            get_logger().debug("system error", exc_info=True)
            fail(system_refusal(error), 1)
        except Exception as error:
            get_logger().debug("unexpected error", exc_info=True)
            fail(unexpected(error), 1)


@click.group(cls=RefereeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--store", metavar="URL", default=None, help=STORE_HELP)
@click.option(
    "--games-dir",
    type=click.Path(file_okay=False),
    default=None,
    help=GAMES_DIR_HELP,
)
@click.option("-v", "--verbose", count=True, help=VERBOSE_HELP)
@click.option("--log-json", is_flag=True, help=LOG_JSON_HELP)
@click.version_option(package_name="mortecouille", prog_name="mortecouille", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context, store: str | None, games_dir: str | None, verbose: int, log_json: bool) -> None:
    """Mortecouille: an event-sourced referee for tabletop naval battles."""
    # the command is loaded by now (click resolves it before this runs): a Ctrl-C held while it
    # loaded is the command's, as Python raises it, except for those that take it themselves
    if ctx.invoked_subcommand not in TAKE_CTRL_C_THEMSELVES:
        interrupts.release()
    configure_logging(verbose, log_json)
    ctx.obj = Context(store_option=store, games_option=games_dir, verbose=verbose, log_json=log_json)


cli.commands = _TableCommands()


class _EveryCommand(Sequence[click.Command]):
    """Every command of :data:`COMMAND_TABLE`, in its order, each module imported on first use
    (for tests and tools that walk them all; a command run from the shell imports only its own)."""

    def _all(self) -> list[click.Command]:
        return [cli.commands[name] for name, _, _ in COMMAND_TABLE]

    @overload
    def __getitem__(self, index: int) -> click.Command: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[click.Command]: ...

    def __getitem__(self, index: int | slice) -> click.Command | Sequence[click.Command]:
        return self._all()[index]

    def __len__(self) -> int:
        return len(COMMAND_TABLE)


#: Every command of ``mortecouille``, resolved from :data:`COMMAND_TABLE` when walked.
COMMANDS: Sequence[click.Command] = _EveryCommand()


def main() -> None:
    cli(prog_name="mortecouille")
