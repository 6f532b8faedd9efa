"""Golden logs of the current schema, and the script that makes them (``make_golden.py``)."""
