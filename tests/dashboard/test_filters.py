"""The dashboard's windows start on whole rollup units, so the API answers series from rollups."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from agentsla.dashboard import filters
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


def test_only_a_series_is_sent_an_aligned_start(monkeypatch) -> None:
    accepted = frozenset({"from", "window", "step", "task_type"})
    monkeypatch.setattr(filters.data, "accepted_params", lambda path: accepted)
    monkeypatch.setattr(filters, "current", lambda: Filters(window="24h"))
    with_series = filters.api_params("/api/v1/hops", step="20m")
    assert set(with_series) == {"from", "step"} and with_series["from"] % 60 == 0
    assert filters.api_params("/api/v1/findings") == {"window": "24h"}


def test_an_api_without_from_is_sent_the_window(monkeypatch) -> None:
    monkeypatch.setattr(filters.data, "accepted_params", lambda path: frozenset({"window", "step"}))
    monkeypatch.setattr(filters, "current", lambda: Filters(window="1h"))
    assert filters.api_params("/api/v1/hops", step="1m") == {"window": "1h", "step": "1m"}
