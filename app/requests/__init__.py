"""The application's one typed entrance: every command a seat may send, as a value
(:mod:`.bodies`), and its reading into the rules' commands (:mod:`.commands`)."""
