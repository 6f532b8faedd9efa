"""The mortecouille ruleset: orders, the turn, wind, gunnery, fire, collisions (rules T, A, N, S, K, X,
W, C)."""
