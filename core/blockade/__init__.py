"""The blockade ruleset (Puzzle Pirates collisions): tokens, rounds, ram damage (rules P1-P3)."""
