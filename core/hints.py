"""The hints a refusal gives, each spelt once: the same way out reads the same
whichever ruleset or command refuses, and names the option the referee types."""

from __future__ import annotations

from typing import Final

#: a turn refused because some ships have no orders (T2) or tokens (P1)
PARTIAL_HINT: Final = "give them, or pass --partial to resolve (those ships do nothing)"

#: orders (or tokens) refused because the ship already has some this turn (T1)
REPLACE_HINT: Final = "give them again with --replace to change them"
