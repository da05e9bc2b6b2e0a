"""The DuckDB file: opened once by `agentsla serve`, migrated, then shared through cursors."""

from __future__ import annotations

from pathlib import Path

import duckdb

from agentsla.collector.schema import migrate
from agentsla.errors import ConfigError


def open_store(path: str | Path) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) the database file and bring its schema up to date."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(str(path))
    except (OSError, duckdb.IOException) as exc:
        raise ConfigError(f"cannot open database {path}: {exc}") from None
    migrate(con)
    return con
