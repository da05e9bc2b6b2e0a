"""Fixtures for the dashboard tests: one real `agentsla serve` holding a small workload."""

from __future__ import annotations

import pytest
import seed
from serverproc import ServerProcess


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """A real server (module-wide) with seed.WORKLOAD posted and materialized."""
    proc = ServerProcess(tmp_path_factory.mktemp("dashboard") / "data").start()
    try:
        seed.post(proc.traces_url, proc.api_url)
        yield proc
    finally:
        if proc.proc and proc.proc.poll() is None:
            proc.stop()
