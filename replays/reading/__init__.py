"""Reading a log: replay, explain, verify, re-derive, audit."""
