"""Read-store engines: one module per database, each with its SQL folder in queries/sql/."""
