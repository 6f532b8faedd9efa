"""The rules: boards, ships, options, dice, movement and collisions, fire, the decider and reducer.

Each ruleset is a value (``core/<ruleset>/ruleset.py``), listed in ``core/rulesets.py``;
nothing is registered by importing a module.
"""
