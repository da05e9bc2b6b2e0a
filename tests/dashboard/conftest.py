"""Fixtures for the dashboard tests: one real `agentsla serve` holding a small workload."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # seed

import seed  # noqa: E402
from serverproc import ServerProcess  # noqa: E402

APP = Path(__file__).parents[2] / "dashboard" / "app.py"


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
