"""The log schema: event types (:mod:`.schema` lists them all), the line format and hash chain
(:mod:`.codec`) and the append-only store (:mod:`.store`).

Importing this package imports nothing: a module that needs an event type imports it from its
module, and the codec reads the schema's table.
"""
