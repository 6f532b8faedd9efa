"""The game service for the table (``mortecouille serve``): an HTTP API, live push by server-sent
events and three pages (table, player, referee), on the same application layer as the CLI.

See ``docs/service.md``. Importing this package loads the web framework: only ``serve`` does."""
