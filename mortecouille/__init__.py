"""Mortecouille: an event-sourced referee engine for tabletop naval battles.

The package's parts are the repository's top-level folders (``mortecouille/`` holds a link to
each), from the bottom up: ``events`` (the log schema, line format and store), ``core`` (the rules
as pure functions: ``decide`` and ``evolve``), ``bots`` (built-in players), ``replays`` (reading a
log: replay, explain, verify, pictures, analytics), ``app`` (the one command path: load, lock, fold,
dice, decide, append) and ``cli`` (parse and print).
"""

__version__ = "0.1.0"
