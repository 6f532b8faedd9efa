"""The log schema: event types (:mod:`.schema` lists them all) and the line format and hash chain
(:mod:`.codec`); the stores that keep logs are :mod:`.storage`.

Importing this package imports nothing: a module that needs an event type imports it from its
module, and the codec reads the schema's table.
"""

# The folder is a part of ``mortecouille``; imported by its bare name (from the repository's root) it
# would load a second copy of every class and table beside the package's own.
if __name__ != "mortecouille.events":
    raise ImportError(f"import mortecouille.events, not {__name__}: events/ is a part of the package")
