"""Where a game's log is kept: the store contract and its engines (files, PostgreSQL, memory)."""
