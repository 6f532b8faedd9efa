"""Built-in players: legal, aggressive orders for one side. Players, not rules: they only call the rules."""
