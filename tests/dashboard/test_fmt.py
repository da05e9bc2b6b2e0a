"""Numbers formatted for people: percentages, durations, counts, ratios, timestamps."""

from __future__ import annotations

import math

import pytest

from agentsla.dashboard import fmt


@pytest.mark.parametrize("share, expected", [
    (0.9876, "98.8%"),
    (1.0, "100.0%"),
    (0.0, "0.0%"),
    (0.99996, "99.996%"),   # just under 1 never shows as 100%
    (0.9995, "99.95%"),
    (0.0004, "<0.1%"),      # tiny but not zero
    (-0.5, "-50.0%"),       # an overspent error budget
    (None, "—"),
    (math.nan, "—"),
])
def test_pct(share, expected) -> None:
    assert fmt.pct(share) == expected


def test_pct_digits() -> None:
    assert fmt.pct(0.999, 2) == "99.90%"


@pytest.mark.parametrize("ms, expected", [
    (0.25, "0.2 ms"),
    (5.5, "5.5 ms"),
    (850, "850 ms"),
    (999.4, "999 ms"),
    (4500, "4.5 s"),
    (150_000, "2.5 min"),
    (5_400_000, "1.5 h"),
    (259_200_000, "3.0 d"),
    (None, "—"),
])
def test_duration(ms, expected) -> None:
    assert fmt.duration(ms) == expected


@pytest.mark.parametrize("n, expected", [
    (0, "0"), (12345, "12,345"), (1234567.0, "1,234,567"), (2.5, "2.5"), (None, "—")])
def test_count(n, expected) -> None:
    assert fmt.count(n) == expected


@pytest.mark.parametrize("n, expected", [
    (950, "950"), (12_300, "12.3k"), (4_500_000, "4.5M"), (1_200_000_000, "1.2B")])
def test_compact(n, expected) -> None:
    assert fmt.compact(n) == expected


def test_ratio_rate_and_labels() -> None:
    assert fmt.ratio(1.3456) == "1.35×"
    assert fmt.ratio(None) == "—"
    assert fmt.rate_per_min(30, 3600) == "0.5/min"
    assert fmt.rate_per_min(60000, 60) == "60,000/min"
    assert fmt.rate_per_min(5, 0) == "—"
    assert fmt.label("budget_exhausted") == "budget exhausted"
    assert fmt.hop("model", "gpt-4o", "rate_limited") == "model gpt-4o · rate limited"
    assert fmt.hop("agent", "agent") == "agent"
    assert fmt.hop(None, None) == "unknown hop"


@pytest.mark.parametrize("value, expected", [
    ("2024-05-01T12:00:03.250Z", "2024-05-01 12:00:03 UTC"),
    (1_714_564_803_000_000_000, "2024-05-01 12:00:03 UTC"),
    ("not a time", "not a time"),
    (None, "—"),
])
def test_timestamp(value, expected) -> None:
    assert fmt.timestamp(value) == expected
