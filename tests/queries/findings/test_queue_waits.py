"""Rising queue waits from per-minute evidence: the quarters are whole minutes and the p90s and
the median budget come from histograms (docs/findings.md, issue #15), checked against values
computed from the story."""

from __future__ import annotations

import pytest

from shapes import Trace
from spanfactory import BASE_NS

from agentsla.queries.findings import find_findings

EVERYTHING = (BASE_NS - 10**12, BASE_NS + 10**15)
MINUTE_NS = 60 * 10**9


def _exact_quantile(values: list[float], q: float) -> float:
    # linear interpolation between the values at rank (n - 1) q, as quantile_cont computes it
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (rank - low) * (ordered[high] - ordered[low])


def _story() -> list[tuple[Trace, float, int]]:
    # a queue wait every 20 s for 20 minutes: 100 + 7 i ms for the first 30 tasks, then
    # 2000 + 311 (i - 30) ms; each task has a 30 s budget
    story = []
    for i in range(60):
        wait = 100.0 + 7 * i if i < 30 else 2000.0 + 311 * (i - 30)
        t = Trace(at_ms=i * 20_000, root_end_ms=wait + 1_000, budget_total_ms=30_000.0)
        t.child(t.root, "queue", "jobs", 0, wait, hop_timeout_ms=40_000)
        story.append((t, wait, t.rows[-1]["end_ns"]))
    return story


def test_the_quarters_are_whole_minutes_and_the_p90s_within_1_1_percent(load):
    story = _story()
    (found,) = [f for f in find_findings(load([r for t, _, _ in story for r in t.rows]),
                                         *EVERYTHING, "saturation", {})]
    assert (found["rule"], found["hop"]) == ("rising_queue_wait", {"kind": "queue",
                                                                   "name": "jobs"})
    ends = [end for _, _, end in story]
    lo, hi = min(ends), max(ends)
    quarter = (hi - lo) // 4
    # the first quarter: the minutes up to the one holding lo + quarter; the last: from the
    # minute holding hi - quarter (BASE_NS is 20 s into its minute)
    early = [w for _, w, end in story if end // MINUTE_NS <= (lo + quarter) // MINUTE_NS]
    late = [w for _, w, end in story if end // MINUTE_NS >= (hi - quarter) // MINUTE_NS]
    # waits ending up to BASE + 340 s (tasks 0-16) and from BASE + 880 s (tasks 44-59): two
    # and one more than the exact quarters (ends before BASE + 297.8 s, from BASE + 893.3 s)
    assert (len(early), len(late)) == (17, 16)
    assert [len([e for e in ends if e < lo + quarter]),
            len([e for e in ends if e >= hi - quarter])] == [15, 15]
    evidence = found["evidence"]
    assert (evidence["waits"], evidence["max_wait_ms"]) == (60, 11_019.0)
    for name, exact in (("early_p90_ms", _exact_quantile(early, 0.9)),
                        ("late_p90_ms", _exact_quantile(late, 0.9)),
                        ("late_budget_ms", 30_000.0)):
        assert evidence[name] != round(exact, 3), name  # the histogram's value
        assert abs(evidence[name] - exact) <= 0.011 * exact, name
    assert _exact_quantile(early, 0.9) == pytest.approx(200.8)
    assert _exact_quantile(late, 0.9) == pytest.approx(10_552.5)
    # the five longest waits of the last quarter: the last five tasks
    assert [e["task_id"] for e in found["examples"]] == [t.task_id for t, _, _ in story[:-6:-1]]


def test_a_rise_within_one_minute_is_not_seen(load):
    # ten waits within 50 s, 100 ms then 15 s: the first and the last quarter are the same
    # minute, so neither p90 differs
    traces = []
    for i in range(10):
        wait = 100.0 if i < 5 else 15_000.0
        t = Trace(at_ms=-20_000 + i * 3_000, root_end_ms=wait + 1_000)
        t.child(t.root, "queue", "jobs", 0, wait, hop_timeout_ms=30_000)
        traces.append(t)
    rows = [r for t in traces for r in t.rows]
    assert len({r["end_ns"] // MINUTE_NS for r in rows if r["hop_kind"] == "queue"}) == 1
    assert find_findings(load(rows), *EVERYTHING, "saturation", {}) == []
