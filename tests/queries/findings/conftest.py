"""Fixtures for the finding tests: in-memory stores loaded through the real TaskWriter."""

from __future__ import annotations

import duckdb
import pytest

from agentsla.collector.store.schema import migrate
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config
from agentsla.queries.engines.duckdb import DuckDBStore


def _loader(cons: list, wrap=lambda con: DuckDBStore(con.cursor())):
    def _load(rows: list[dict]):
        con = duckdb.connect(config={"threads": "1"})  # tiny data: threads only contend
        cons.append(con)
        migrate(con)
        now_ns = max(r["end_ns"] for r in rows) + 1 if rows else None
        TaskWriter(con, load_config(environ={}).tasks).write([dict(r) for r in rows], now_ns=now_ns)
        return wrap(con)
    return _load


@pytest.fixture
def load():
    """Return load(rows) -> a read store over a fresh database holding those rows and tasks."""
    cons: list = []
    yield _loader(cons)
    for con in cons:
        con.close()


@pytest.fixture
def load_database():
    """Like `load`, returning the DuckDB connection (for an app that opens a store per request)."""
    cons: list = []
    yield _loader(cons, wrap=lambda con: con)
    for con in cons:
        con.close()


@pytest.fixture(scope="module")
def load_module():
    """Like `load`, for stores shared by a module's tests."""
    cons: list = []
    yield _loader(cons)
    for con in cons:
        con.close()
