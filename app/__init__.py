"""The application layer: the one command path below the CLI (and the coming HTTP service)."""

# The folder is a part of ``mortecouille``; imported by its bare name (from the repository's root) it
# would load a second copy of every class and table beside the package's own.
if __name__ != "mortecouille.app":
    raise ImportError(f"import mortecouille.app, not {__name__}: app/ is a part of the package")
