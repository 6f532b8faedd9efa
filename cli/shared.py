"""What every CLI command shares: the store of games, printing, and how errors become exit codes.

The click group itself and its list of commands are in mortecouille.cli.main.

Exit codes: 0 ok, 2 bad input or a rule refusal (the message names the field
or rule ID), 3 conflict or lock, 4 corrupt or tampered log.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Final, NoReturn, TypeVar

import click

from mortecouille.app.games import game_log, load, open_games, store_source, store_url
from mortecouille.cli.plain import DELIBERATE_ERRORS, configure_logging, error_line, exit_code_of
from mortecouille.cli.refusals import refusal_text
from mortecouille.core.errors import BadInput
from mortecouille.core.limits import shown
from mortecouille.events.storage.contract import GameStore, is_file_store_url
from mortecouille.events.storage.errors import StoreError

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int) -> NoReturn:
    click.echo(error_line(message), err=True)
    sys.exit(code)


def reports_errors(fn: F) -> F:
    """Turn the engine's deliberate errors into a message and the documented exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DELIBERATE_ERRORS as error:
            fail(refusal_text(error), exit_code_of(error))

    return wrapper  # type: ignore[return-value]


@contextlib.contextmanager
def typed_as(words: dict[str, str]) -> Iterator[None]:
    """A refusal naming a request's field named as the command line spells it (``facing`` ->
    ``--facing``, ``players[2]`` -> ``--players``): the words the person typed."""
    try:
        yield
    except BadInput as error:
        root = error.field.split(".")[0].split("[")[0]
        if root not in words:
            raise
        raise BadInput(words[root], error.key, rule=error.rule, **error.params) from None


class Context:
    """What the global options chose: the store of games (opened when a command first asks for
    it, so ``prices`` or ``odds`` never connect to a database) and how much the log says."""

    def __init__(
        self,
        store_option: str | None = None,
        games_option: str | None = None,
        verbose: int = 0,
        log_json: bool = False,
    ) -> None:
        #: ``--store URL`` and ``--games-dir DIR`` as given (before or after the subcommand)
        self.store_option = store_option
        self.games_option = games_option
        #: how much the log says and how (``-v``, ``--log-json``): kept so that the same options
        #: given after a subcommand add to those given before it
        self.verbose = verbose
        self.log_json = log_json
        self._store: GameStore | None = None

    @property
    def store_url(self) -> str:
        """The URL of the store the options and the environment name (see ``app.commands.store_url``)."""
        return store_url(self.store_option, self.games_option)

    @property
    def store(self) -> GameStore:
        """The store of games, opened on first use and closed when the command ends."""
        if self._store is None:
            self._store = open_games(self.store_url, store_source(self.store_option, self.games_option))
            current = click.get_current_context(silent=True)
            if current is not None:
                current.find_root().call_on_close(self.close)
        return self._store

    @property
    def games(self) -> Path:
        """The games directory, for what only a file store has (``serve`` until it takes a store):
        a store of another kind is refused, naming it."""
        directory = self.games_directory
        if directory is None:
            raise StoreError(
                f"--store {self.store.url}: this command works on a games directory (file:DIR) only"
            )
        return directory

    @property
    def games_directory(self) -> Path | None:
        """The file store's directory (outputs are never written over its files), or None."""
        if self._store is None and not is_file_store_url(self.store_url):
            return None  # no need to connect to a database to learn it has no directory
        store = self.store
        return store.folder()

    def close(self) -> None:
        if self._store is not None:
            store, self._store = self._store, None
            store.close()


pass_context = click.make_pass_decorator(Context)


# --- the global options, before or after the subcommand -------------------------------
#
# ``mortecouille --games-dir D state g`` and ``mortecouille state g --games-dir D`` mean the same:
# the group reads these options first, then each command takes them again as below, changing
# the same Context. The group's own options and these share their names and helps from here.

GAMES_DIR_HELP = (
    "Where game logs live: shorthand for --store file:DIR (default $MORTECOUILLE_GAMES or ./games)."
)
STORE_HELP = (
    "The store of games: file:DIR, a directory, or postgresql://USER@HOST:PORT/DB[?schema=NAME] "
    "(default $MORTECOUILLE_STORE, else file:./games)."
)
VERBOSE_HELP = "More detail on stderr (-vv for debug)."
LOG_JSON_HELP = "Structured JSON log lines on stderr."


def _settings(ctx: click.Context) -> Context:
    """The Context the group made; made here when the group's callback did not run (shell
    completion parses the command line without running any command)."""
    settings = ctx.find_object(Context)
    if settings is None:
        root = ctx.find_root().params
        settings = ctx.obj = Context(store_option=root.get("store"), games_option=root.get("games_dir"))
    return settings


def _set_games_dir(ctx: click.Context, _: click.Parameter, value: str | None) -> None:
    if value is not None:
        settings = _settings(ctx)
        settings.close()
        settings.games_option = value


def _set_store(ctx: click.Context, _: click.Parameter, value: str | None) -> None:
    if value is not None:
        settings = _settings(ctx)
        settings.close()
        settings.store_option = value


def _set_verbose(ctx: click.Context, _: click.Parameter, value: int) -> None:
    if value:
        settings = _settings(ctx)
        settings.verbose += value
        configure_logging(settings.verbose, settings.log_json)


def _set_log_json(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if value:
        settings = _settings(ctx)
        settings.log_json = True
        configure_logging(settings.verbose, settings.log_json)


def global_options() -> list[click.Option]:
    """``--store``, ``--games-dir``, ``-v`` and ``--log-json`` as a command's own options: given after the
    subcommand, they change the Context the group made (eager, so they apply before any other
    option's callback reads it)."""
    return [
        click.Option(
            ["--store"],
            metavar="URL",
            default=None,
            expose_value=False,
            is_eager=True,
            callback=_set_store,
            help=STORE_HELP,
        ),
        click.Option(
            ["--games-dir"],
            type=click.Path(file_okay=False),
            default=None,
            expose_value=False,
            is_eager=True,
            callback=_set_games_dir,
            help=GAMES_DIR_HELP,
        ),
        click.Option(
            ["-v", "--verbose"],
            count=True,
            expose_value=False,
            is_eager=True,
            callback=_set_verbose,
            help=VERBOSE_HELP,
        ),
        click.Option(
            ["--log-json"],
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_set_log_json,
            help=LOG_JSON_HELP,
        ),
    ]


def with_global_options(command: click.Command) -> click.Command:
    """``command`` taking the global options too; one it already has (``archive --games-dir``,
    which means the same directory) is left as the command declares it. Its GAME and SHIP
    arguments complete in the shell (``_MORTECOUILLE_COMPLETE=bash_source mortecouille``)."""
    taken = {opt for param in command.params for opt in param.opts}
    command.params.extend(option for option in global_options() if not taken & set(option.opts))
    # ``new`` names a game that does not exist yet: offering the existing ones would mislead.
    completions = {name: fn for name, fn in COMPLETIONS.items() if (command.name, name) != ("new", "game")}
    for param in command.params:
        if isinstance(param, click.Argument) and param.name in completions:
            # click takes a completion callback only as the argument is declared; set here, every
            # command's GAME and SHIP complete alike without each module repeating it.
            param._custom_shell_complete = completions[param.name]  # noqa: SLF001
    return command


# --- shell completion ------------------------------------------------------------
#
# Completion reads the store and never writes; a log it cannot read offers nothing.


def complete_game(ctx: click.Context, _: click.Parameter, incomplete: str) -> list[str]:
    """The games of the store whose names start with what was typed."""
    try:
        names = _settings(ctx).store.names()
    except Exception:  # noqa: BLE001 - completion offers nothing rather than a traceback
        return []
    return [name for name in names if name.startswith(incomplete)]


def complete_ship(ctx: click.Context, _: click.Parameter, incomplete: str) -> list[str]:
    """The ships of the game already on the command line (placed or bought), by what was typed."""
    game = ctx.params.get("game")
    if not isinstance(game, str):
        return []
    try:
        state = load(game_log(_settings(ctx).store, game))[1]
    except Exception:  # noqa: BLE001 - completion offers nothing rather than a traceback
        return []
    bought = [purchase.name for fleet in state.fleets.values() for purchase in fleet.ships]
    names = sorted({*state.ships, *bought})
    return [name for name in names if name.casefold().startswith(incomplete.casefold())]


def complete_kind(ctx: click.Context, _: click.Parameter, incomplete: str) -> list[str]:
    """The ship kinds of the price list (F1)."""
    # imported when a kind is completed, not by every command that shares this module
    from mortecouille.core.fleet.catalogue import catalogue_for

    return [kind for kind in catalogue_for().ships if kind.startswith(incomplete.casefold())]


#: The arguments that complete, by name, with what they offer.
COMPLETIONS: Final[dict[str, Callable[[click.Context, click.Parameter, str], list[str]]]] = {
    "game": complete_game,
    "ship": complete_ship,
    "kind": complete_kind,
}


def echo_lines(lines: Iterable[str]) -> None:
    """Print what the application described, one line at a time: each escaped (names and texts
    from a log may be old or forged), so none drives the terminal or starts a line of its own."""
    for line in lines:
        click.echo(shown(line))


def echo_text(text: str) -> None:
    """Print a text of several lines (no styles), each line escaped as ``echo_lines`` does."""
    echo_lines(text.split("\n"))
