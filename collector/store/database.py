"""The DuckDB file: opened once by `agentsla serve`, migrated, then shared through cursors."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from agentsla.errors import ConfigError


#: The name the database file is attached under; every connection to the store works in it.
CATALOG = "agentsla"

#: Rows of a row group (DuckDB's default: 122,880). Each checkpoint compresses the last, partly
#: filled row group of a table again, whole: with a span's attributes at about a kilobyte, a
#: span_store group near full held hundreds of MB through the checkpoint (the RSS peaks of the
#: ingest bench) and was compressed again at every checkpoint until full. A quarter of the
#: default bounds both and scans as fast (docs/architecture.md, Row groups of 32,768 rows).
ROW_GROUP_SIZE = 32_768


def open_store(path: str | Path, memory_limit: str = "") -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) the database file and bring its schema up to date.

    `memory_limit` (e.g. "2GB") caps DuckDB's buffer pool; empty keeps DuckDB's default (80 % of
    RAM), which lets the process grow with the data it has read. The file is attached as
    CATALOG (DuckDB sets a row group size only when attaching), so a second connection to it
    comes from `cursor`, not `con.cursor()`.
    """
    # imported here: the schema's migrations build the rollups, which insert through insert_arrow
    from agentsla.collector.store.schema import migrate

    path = Path(path)
    # spills beside the file, as when DuckDB opens the file itself (in memory: ./.tmp)
    config = {"temp_directory": f"{path}.tmp"}
    if memory_limit:
        config["memory_limit"] = memory_limit
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(config=config)
    except duckdb.Error as exc:  # e.g. a memory_limit DuckDB cannot parse
        raise ConfigError(f"cannot open database {path} with memory_limit "
                          f"{memory_limit!r}: {exc}") from None
    try:
        quoted = str(path).replace("'", "''")
        con.execute(f"attach '{quoted}' as {CATALOG} (row_group_size {ROW_GROUP_SIZE})")
        con.execute(f"use {CATALOG}")
    except duckdb.Error as exc:  # a file locked by another process, not a DuckDB file, ...
        con.close()
        raise ConfigError(f"cannot open database {path}: {exc}") from None
    migrate(con)
    return con


def cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A new connection to the store of `con`: a cursor starts in DuckDB's in-memory default
    database, so it moves to the file open_store attached (a store that is itself in memory,
    as in tests, has no CATALOG and stays where it is)."""
    cur = con.cursor()
    try:
        cur.execute(f"use {CATALOG}")
    except duckdb.CatalogException:
        pass  # not opened by open_store: its default database is the store
    return cur


def insert_arrow(con: duckdb.DuckDBPyConnection, table: str, rows: pa.Table) -> None:
    """Append an Arrow table whose columns are `table`'s, in its physical order.

    Through a relation over the table (`from_arrow`: the relation holds a handle to `rows`
    until the insert has run), not a registered name: `register` and `unregister` together
    cost ~2 ms of CPU on the build machine, more than inserting 50 task rows; nor a replacement
    scan (DuckDB finding the table in the caller's frame), which crashed `serve`'s writer
    thread in the kill -9 soak (docs/architecture.md). The insert is by position.
    """
    con.from_arrow(rows).insert_into(table)
