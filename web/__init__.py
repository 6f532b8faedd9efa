"""The game service for the table (``mortecouille serve``): an HTTP API, live push by server-sent
events and three pages (table, player, referee), on the same application layer as the CLI.

See ``docs/service.md``. Importing this package loads the web framework: only ``serve`` does."""

# The folder is a part of ``mortecouille``; imported by its bare name (from the repository's root) it
# would load a second copy of every class and table beside the package's own.
if __name__ != "mortecouille.web":
    raise ImportError(f"import mortecouille.web, not {__name__}: web/ is a part of the package")
