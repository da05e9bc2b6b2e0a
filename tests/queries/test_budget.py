"""Budget waterfall: self time by hop kind with overlaps merged and ghost work clipped."""

from __future__ import annotations

import pytest

from agentsla.queries.budget import budget_waterfall
from queryrows import NS, T0, insert, span, task

START, END = T0, T0 + 60 * NS
TR2 = "2" * 32


@pytest.fixture
def tasks(con, store):
    t1 = task("t1", end_s=10, duration_ms=10_000, budget_total_ms=20_000.0,
              trace_id="f" * 32, root_span_id="r")
    t2 = task("t2", end_s=1, duration_ms=1_000, trace_id=TR2, root_span_id="r")
    insert(con, tasks=[t1, t2], spans=[
        # t1 runs 0..10000 ms after T0
        span("r", None, 0, 10_000, hop_kind="gateway"),
        span("a", "r", 100, 9_900, hop_kind="agent"),
        span("m1", "a", 1_000, 4_000, hop_kind="model"),
        span("m2", "a", 3_000, 5_000, hop_kind="model"),       # parallel with m1
        span("x", "a", 6_000, 7_000, hop_kind="tool"),
        span("g", "a", 9_500, 12_000, hop_kind="tool"),        # outlives its parent: clipped
        span("orphan", "nobody", 0, 5_000, hop_kind="cache"),  # not reachable from the root
        # t2 runs 0..1000 ms after T0
        span("r", None, 0, 1_000, task_id="t2", trace_id=TR2, hop_kind="gateway"),
        span("m", "r", 0, 600, task_id="t2", trace_id=TR2, hop_kind="model"),
    ])
    return store


def test_waterfall(tasks):
    got = budget_waterfall(tasks, START, END)
    assert (got["tasks"], got["tasks_with_budget"]) == (2, 1)
    assert got["avg_duration_ms"] == pytest.approx(5_500)
    assert got["unused_budget_share"] == pytest.approx(0.5)  # 10 s used of 20 s
    rows = {r["hop_kind"]: r for r in got["by_hop_kind"]}
    assert list(rows) == ["model", "agent", "tool", "gateway"]  # biggest first
    # t1: gateway 10000 - 9800 = 200; agent 9800 - (1000..5000 + 6000..7000 + 9500..9900) = 4400;
    # model 3000 + 2000 (parallel, each its own); tool 1000 + 400 (clipped at 9900)
    # t2: gateway 1000 - 600 = 400; model 600
    expected = {"model": (2, 5_600, 5_000), "agent": (1, 4_400, 4_400),
                "tool": (1, 1_400, 1_400), "gateway": (2, 600, 200)}
    for kind, (with_hop, self_ms, budgeted) in expected.items():
        row = rows[kind]
        assert (row["tasks_with_hop"], row["self_ms"]) == (with_hop, pytest.approx(self_ms)), kind
        assert row["avg_ms_per_task"] == pytest.approx(self_ms / 2)
        assert row["share_of_duration"] == pytest.approx(self_ms / 11_000)
        assert row["share_of_budget"] == pytest.approx(budgeted / 20_000)


def test_empty_window(tasks):
    got = budget_waterfall(tasks, T0 - 7200 * NS, T0 - 3600 * NS)
    assert got["tasks"] == 0 and got["by_hop_kind"] == [] and got["unused_budget_share"] is None
