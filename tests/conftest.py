"""Fixtures shared by the whole suite."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # test helpers: serverproc, spanfactory

from serverproc import ServerProcess  # noqa: E402


@pytest.fixture
def server(tmp_path: Path):
    """A real `agentsla serve` on free loopback ports with a fresh data dir."""
    proc = ServerProcess(tmp_path / "data").start()
    yield proc
    if proc.proc and proc.proc.poll() is None:
        proc.stop()
