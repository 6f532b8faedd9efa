"""The board and the simultaneous movement engine both rulesets share (rules B, M)."""
