"""Fixtures of the read-side tests: the in-memory database behind the DuckDB read store."""

from __future__ import annotations

import pytest

from agentsla.queries.engines.duckdb import DuckDBStore


@pytest.fixture
def store(con):
    """The DuckDB read store over the suite's in-memory database (`con`)."""
    return DuckDBStore(con)
