"""The log schema: event types (:mod:`.schema` lists them all) and the line format and hash chain
(:mod:`.codec`); the stores that keep logs are :mod:`.storage`.

Importing this package imports nothing: a module that needs an event type imports it from its
module, and the codec reads the schema's table.
"""
