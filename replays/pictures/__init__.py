"""Pictures of a game: the terminal board, SVG, the HTML replay."""
