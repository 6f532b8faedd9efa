"""Built-in players: legal, aggressive orders for one side. Players, not rules: they only call the rules."""

# The folder is a part of ``mortecouille``; imported by its bare name (from the repository's root) it
# would load a second copy of every class and table beside the package's own.
if __name__ != "mortecouille.bots":
    raise ImportError(f"import mortecouille.bots, not {__name__}: bots/ is a part of the package")
