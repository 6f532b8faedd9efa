"""The commands a player gives for one turn, as values: mortecouille orders (T1) and blockade
tokens (P1).

Both rulesets name all three: each takes its own and refuses the other's citing a rule
(``Ruleset.refusals``). So they live here, apart from the rules that decide them: a game of one
ruleset never imports the other's turn (blockade rounds, gunnery), and folding or showing a game
imports neither (the CLI's start-up). Their deciders are in
:mod:`mortecouille.core.mortecouille.order_checks` and :mod:`mortecouille.core.blockade.commands`.
"""

from __future__ import annotations

from mortecouille.core.life_cycle import Command
from mortecouille.events.orders import Order


class GiveOrder(Command, frozen=True, kw_only=True):
    """Every order of ``ship`` for the current turn; ``replace`` to change orders already given."""

    ship: str
    actions: tuple[Order, ...]
    replace: bool = False


class WithdrawOrder(Command, frozen=True, kw_only=True):
    """Take back ``ship``'s orders for the current turn before it is resolved (T1)."""

    ship: str


class GiveTokens(Command, frozen=True, kw_only=True):
    """A ship's tokens for this turn; ``replace`` to change tokens already given (as ``order``)."""

    ship: str
    tokens: tuple[str | None, ...]
    replace: bool = False
