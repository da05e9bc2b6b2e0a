"""Opening the store: migrations, and the optional DuckDB memory limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentsla.collector.store.schema import SCHEMA_VERSION
from agentsla.collector.store.database import open_store
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
