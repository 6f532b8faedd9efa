"""Mortecouille fleets: the catalogue of ships and options, buying, and what a ship derives (F1-F4)."""
