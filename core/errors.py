"""The errors the engine raises on purpose.

Every refusal names the rule ID or the input field at fault, so the CLI can
print it as is and exit with the right code.
"""

from __future__ import annotations


class MortecouilleError(Exception):
    """Base of every error the engine raises deliberately."""

    exit_code = 1


class RuleViolation(MortecouilleError):
    """A command the rules refuse (exit 2). ``rule`` is a rules.md ID such as ``S7``."""

    exit_code = 2

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"[{rule}] {message}")
        self.rule = rule
        self.message = message


class BadInput(MortecouilleError):
    """Malformed or out-of-range input (exit 2). ``field`` names the argument or key."""

    exit_code = 2

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
