"""Rising queue waits from per-minute evidence: the quarters are cut at whole seconds and the
p90s and the median budget come from histograms (docs/findings.md, issue #15), checked against
values computed from the story, from the stored evidence and from raw rows alike."""

from __future__ import annotations

import pytest

from shapes import Trace
from spanfactory import BASE_NS

from agentsla.queries.findings import evidence, find_findings, resolve_thresholds

EVERYTHING = (BASE_NS - 10**12, BASE_NS + 10**15)


def _queued(end_ms: float, wait_ms: float, **root) -> Trace:
    """A task whose queue wait of wait_ms ends end_ms after BASE_NS."""
    t = Trace(at_ms=end_ms - wait_ms, root_end_ms=wait_ms + 1_000, **root)
    t.child(t.root, "queue", "jobs", 0, wait_ms, hop_timeout_ms=40_000)
    return t


def _findings(load, traces: list[Trace], stored: bool) -> list[dict]:
    store = load([r for t in traces for r in t.rows])
    while stored and any(evidence.refresh(store, resolve_thresholds({}))):
        pass  # the worker's rounds: every minute (and hour) from the stored evidence
    return find_findings(store, *EVERYTHING, "saturation", {})


@pytest.mark.parametrize("stored", [False, True], ids=["raw", "stored"])
def test_the_quarters_are_whole_seconds_and_the_p90s_within_1_1_percent(load, stored):
    # a queue wait ending every 20 s for 20 minutes: 100 + 7 i ms for the first 30 tasks, then
    # 2000 + 311 (i - 30) ms; each task has a 30 s budget
    waits = [100.0 + 7 * i if i < 30 else 2000.0 + 311 * (i - 30) for i in range(60)]
    traces = [_queued(i * 20_000 + wait, wait, budget_total_ms=30_000.0)
              for i, wait in enumerate(waits)]
    (found,) = _findings(load, traces, stored)
    assert (found["rule"], found["hop"]) == ("rising_queue_wait", {"kind": "queue",
                                                                   "name": "jobs"})
    # the waits end from BASE + 0.1 s to BASE + 1,191.019 s: the first quarter ends at
    # BASE + 297.83 s, rounded to BASE + 298 s (task 14 ended at 280.198 s, task 15 at
    # 300.205 s); the last starts at BASE + 893.29 s, rounded to BASE + 893 s (task 44 ended at
    # 886.354 s, task 45 at 906.665 s). Those minutes are cut in the middle.
    # Their exact p90s (quantile_cont: rank 14 x 0.9 = 12.6 among the 15 of each): early
    # 184 + 0.6 x 7 = 188.2 ms (tasks 12 and 13), late 10,397 + 0.6 x 311 = 10,583.6 ms (tasks
    # 57 and 58).
    evidence_ = found["evidence"]
    assert (evidence_["waits"], evidence_["max_wait_ms"]) == (60, 11_019.0)
    for name, exact in (("early_p90_ms", 188.2), ("late_p90_ms", 10_583.6),
                        ("late_budget_ms", 30_000.0)):
        assert evidence_[name] != exact, name  # the histogram's value
        assert abs(evidence_[name] - exact) <= 0.011 * exact, name
    # the five longest waits of the last quarter: the last five tasks
    assert [e["task_id"] for e in found["examples"]] == [t.task_id for t in traces[:-6:-1]]


@pytest.mark.parametrize("stored", [False, True], ids=["raw", "stored"])
def test_a_rise_within_one_minute_is_seen_to_the_second(load, stored):
    # A run of 45 s within one minute (from BASE + 40 s): waits end every 5 s from its 5th
    # second to its 50th, 100 ms for the first three, 2 s in the middle (one of 20 s, the
    # longest), 15 to 16.5 s for the last three; and two more: a 100 ms wait ending at 15.9 s
    # and one of 15.2 s ending at 38.6 s.
    minute_ms = 40_000.0
    plan = [(5, 100.0), (10, 100.0), (15, 100.0), (20, 2_000.0), (25, 2_000.0),
            (30, 20_000.0), (35, 2_000.0), (40, 15_000.0), (45, 16_000.0), (50, 16_500.0),
            (15.9, 100.0), (38.6, 15_200.0)]
    traces = [_queued(minute_ms + at_s * 1000, wait) for at_s, wait in plan]
    (found,) = _findings(load, traces, stored)
    assert (found["rule"], found["hop"]) == ("rising_queue_wait", {"kind": "queue",
                                                                   "name": "jobs"})
    # the run's quarters: before 16.25 s and from 38.75 s, rounded to seconds 16 and 39 of the
    # minute: the early quarter holds the four 100 ms waits (ending before 16 s), the late one
    # the waits ending at 40, 45 and 50 s (38.6 s is before 39 s; p90: rank 2 x 0.9 = 1.8,
    # 16,000 + 0.8 x 500 = 16,400 ms); the 20 s wait at 30 s is in neither
    assert found["evidence"]["max_wait_ms"] == 20_000.0
    for name, exact in (("early_p90_ms", 100.0), ("late_p90_ms", 16_400.0)):
        assert abs(found["evidence"][name] - exact) <= 0.011 * exact, name
    assert found["evidence"]["late_budget_ms"] == pytest.approx(60_000.0, rel=0.011)
    # the late quarter's waits, longest first (not the minute's longest, which is not late)
    assert [e["task_id"] for e in found["examples"]] == [
        traces[i].task_id for i in (9, 8, 7)]
