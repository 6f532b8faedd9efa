"""The rules: boards, ships, options, dice, movement and collisions, fire, the decider and reducer.

Importing the package registers every ruleset's commands and events.
"""
