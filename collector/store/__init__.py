"""The store: schema and migrations, the DuckDB file, and the one writer that commits spans and tasks."""
