"""The dashboard's windows start on whole rollup units, so the API answers series from rollups."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from agentsla.dashboard.filters import Filters


def _at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


@pytest.mark.parametrize("window, start", [
    ("15m", "2026-12-01T10:03:00"),  # 15 s steps: still the next whole minute
    ("1h", "2026-12-01T09:18:00"),   # 1 m steps: 59 whole minutes and the one holding now
    ("24h", "2026-11-30T10:18:00"),  # 20 m steps: whole minutes
    ("3d", "2026-11-28T11:00:00"),   # 1 h steps: whole hours, read from the hour tier
    ("30d", "2026-11-01T11:00:00"),  # 12 h steps: whole hours
])
def test_a_window_starts_on_the_next_whole_minute_or_hour(window: str, start: str) -> None:
    now = _at("2026-12-01T10:17:30")
    assert Filters(window=window).start_s(now) == _at(start)


def test_a_window_ending_on_a_whole_minute_keeps_its_length() -> None:
    assert Filters(window="1h").start_s(_at("2026-12-01T10:00:00")) == _at("2026-12-01T09:00:00")
