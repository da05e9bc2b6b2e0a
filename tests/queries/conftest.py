"""Fixtures for the read side: an empty migrated DuckDB in memory."""

from __future__ import annotations

import duckdb
import pytest

from agentsla.collector.schema import migrate


@pytest.fixture
def con():
    """A fresh in-memory database with the agentsla schema."""
    connection = duckdb.connect()
    migrate(connection)
    yield connection
    connection.close()
