"""Many games, one SQL engine: the Parquet archive, read-only queries and reports."""
