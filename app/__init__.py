"""The application layer: the one command path below the CLI (and the coming HTTP service)."""
