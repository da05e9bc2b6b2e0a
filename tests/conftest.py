"""Fixtures shared by the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from serverproc import ServerProcess


@pytest.fixture
def server(tmp_path: Path):
    """A real `agentsla serve` on free loopback ports with a fresh data dir."""
    proc = ServerProcess(tmp_path / "data").start()
    yield proc
    if proc.proc and proc.proc.poll() is None:
        proc.stop()
