"""Reading logs: replay, explain, verify, pictures, scenarios, archive and analytics."""

# The folder is a part of ``mortecouille``; imported by its bare name (from the repository's root) it
# would load a second copy of every class and table beside the package's own.
if __name__ != "mortecouille.replays":
    raise ImportError(f"import mortecouille.replays, not {__name__}: replays/ is a part of the package")
