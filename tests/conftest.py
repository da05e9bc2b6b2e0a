"""Fixtures shared by the whole suite."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from serverproc import ServerProcess

from agentsla.collector.store.schema import migrate


@pytest.fixture
def con():
    """A fresh in-memory database with the agentsla schema."""
    connection = duckdb.connect()
    migrate(connection)
    yield connection
    connection.close()


@pytest.fixture
def server(tmp_path: Path):
    """A real `agentsla serve` on free loopback ports with a fresh data dir."""
    proc = ServerProcess(tmp_path / "data").start()
    yield proc
    if proc.proc and proc.proc.poll() is None:
        proc.stop()
