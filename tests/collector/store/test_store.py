"""Opening the store: migrations, and the optional DuckDB memory limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentsla.collector.store.schema import SCHEMA_VERSION
from agentsla.collector.store.database import ROW_GROUP_SIZE, cursor, open_store
from agentsla.errors import ConfigError


def test_open_store_migrates_and_caps_memory(tmp_path: Path) -> None:
    con = open_store(tmp_path / "a" / "db.duckdb", memory_limit="256MB")
    assert con.execute("select max(version) from schema_version").fetchone()[0] == SCHEMA_VERSION
    limit = con.execute("select current_setting('memory_limit')").fetchone()[0]
    assert limit.replace(" ", "").upper().startswith(("244.1MIB", "256MB", "244MIB"))
    con.close()


def test_bad_memory_limit_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="memory_limit 'lots'"):
        open_store(tmp_path / "db.duckdb", memory_limit="lots")


def _row_groups(con, table: str) -> list[int]:
    return [n for (n,) in con.execute(
        f"select max(count) from pragma_storage_info('{table}') group by row_group_id "
        "order by row_group_id").fetchall()]


def test_the_store_keeps_row_groups_of_row_group_size_rows_after_reopening(tmp_path: Path) -> None:
    # DuckDB takes a row group size only when it attaches a file, so every open sets it again:
    # rows appended after reopening fill groups of ROW_GROUP_SIZE rows, not DuckDB's 122,880.
    path = tmp_path / "db.duckdb"
    con = open_store(path)
    con.close()
    con = open_store(path)
    con.execute("insert into trace_task select printf('%032x', i), 't' || i from range(70000) t(i)")
    con.execute("checkpoint")
    assert ROW_GROUP_SIZE < 122_880
    assert _row_groups(con, "trace_task") == [ROW_GROUP_SIZE, ROW_GROUP_SIZE,
                                              70000 - 2 * ROW_GROUP_SIZE]
    con.close()


def test_queries_spill_beside_the_store_file(tmp_path: Path) -> None:
    # the file is attached to an in-memory database, whose own spill directory is ./.tmp
    path = tmp_path / "db.duckdb"
    con = open_store(path)
    assert con.execute("select current_setting('temp_directory')").fetchone() == (f"{path}.tmp",)
    con.close()


def test_a_cursor_reads_the_store_file(tmp_path: Path) -> None:
    con = open_store(tmp_path / "db.duckdb")
    con.execute("insert into trace_task values ('a', 'task-a')")
    assert cursor(con).execute("select task_id from trace_task").fetchall() == [("task-a",)]
    con.close()


def test_a_file_that_is_not_a_store_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "db.duckdb"
    path.write_text("not a database" * 1000)
    with pytest.raises(ConfigError, match="cannot open database .*not a valid DuckDB"):
        open_store(path)
