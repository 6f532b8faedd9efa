"""The command line: parse what the referee and the players type, print what the rules answer."""

# The folder is a part of ``mortecouille``; imported by its bare name (from the repository's root) it
# would load a second copy of every class and table beside the package's own.
if __name__ != "mortecouille.cli":
    raise ImportError(f"import mortecouille.cli, not {__name__}: cli/ is a part of the package")
