"""The DuckDB file: opened once by `agentsla serve`, migrated, then shared through cursors."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from agentsla.errors import ConfigError


def open_store(path: str | Path, memory_limit: str = "") -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) the database file and bring its schema up to date.

    `memory_limit` (e.g. "2GB") caps DuckDB's buffer pool; empty keeps DuckDB's default (80 % of
    RAM), which lets the process grow with the data it has read.
    """
    # imported here: the schema's migrations build the rollups, which insert through insert_arrow
    from agentsla.collector.store.schema import migrate

    path = Path(path)
    config = {"memory_limit": memory_limit} if memory_limit else {}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(str(path), config=config)
    except (OSError, duckdb.IOException) as exc:
        raise ConfigError(f"cannot open database {path}: {exc}") from None
    except duckdb.Error as exc:  # e.g. a memory_limit DuckDB cannot parse
        raise ConfigError(f"cannot open database {path} with memory_limit "
                          f"{memory_limit!r}: {exc}") from None
    migrate(con)
    return con


def insert_arrow(con: duckdb.DuckDBPyConnection, table: str, rows: pa.Table) -> None:
    """Append an Arrow table whose columns are `table`'s, in its physical order.

    Through a relation over the table (`from_arrow`: the relation holds a handle to `rows`
    until the insert has run), not a registered name: `register` and `unregister` together
    cost ~2 ms of CPU on the build machine, more than inserting 50 task rows; nor a replacement
    scan (DuckDB finding the table in the caller's frame), which crashed `serve`'s writer
    thread in the kill -9 soak (docs/architecture.md). The insert is by position.
    """
    con.from_arrow(rows).insert_into(table)
