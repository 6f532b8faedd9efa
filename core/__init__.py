"""The rules: boards, ships, options, dice, movement and collisions, fire, the decider and reducer.

Each ruleset is a value (``core/<ruleset>/ruleset.py``), listed in ``core/rulesets.py``;
nothing is registered by importing a module.
"""

# The folder is a part of ``mortecouille``; imported by its bare name (from the repository's root) it
# would load a second copy of every class and table beside the package's own.
if __name__ != "mortecouille.core":
    raise ImportError(f"import mortecouille.core, not {__name__}: core/ is a part of the package")
