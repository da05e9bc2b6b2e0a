"""Root-cause Pareto: ordering, shares, seconds lost and examples, computed by hand."""

from __future__ import annotations

import pytest

from agentsla.queries.root_causes import root_cause_series, root_causes
from queryrows import NS, T0, insert, task

START, END = T0, T0 + 60 * NS
TIMEOUT = {"ffh_kind": "model", "ffh_name": "gpt-4", "ffh_reason": "timeout"}
RATE = {"ffh_kind": "model", "ffh_name": "gpt-4", "ffh_reason": "rate_limited"}
TOOL = {"ffh_kind": "tool", "ffh_name": "search", "ffh_reason": "server_error"}


@pytest.fixture
def blamed(con, store):
    insert(con, tasks=[
        task("a1", "failed", end_s=10, duration_ms=30_000, **TIMEOUT),
        task("a2", "budget_exhausted", end_s=20, duration_ms=60_000, **TIMEOUT),
        task("a3", "degraded", end_s=30, duration_ms=10_000, **TIMEOUT),
        task("b1", "degraded", end_s=25, duration_ms=2_000, **RATE),
        task("c1", "rejected", end_s=45, duration_ms=1_000, **TOOL),
        task("c2", "failed", end_s=50, duration_ms=1_000, **TOOL),
        task("ok", "success", end_s=5),                        # not blamed
        task("lost", "lost", end_s=5, **TIMEOUT),              # lost tasks carry no blame
        task("old", "failed", end_s=-5, **TIMEOUT),            # before the window
    ])
    return store


def test_pareto_order_shares_and_seconds(blamed):
    rows = root_causes(blamed, START, END)
    assert [(r["ffh_name"], r["ffh_reason"], r["tasks"]) for r in rows] == [
        ("gpt-4", "timeout", 3), ("search", "server_error", 2), ("gpt-4", "rate_limited", 1)]
    assert [r["share"] for r in rows] == pytest.approx([3 / 6, 2 / 6, 1 / 6])
    assert [r["cumulative_share"] for r in rows] == pytest.approx([0.5, 5 / 6, 1.0])
    top = rows[0]
    assert top["seconds_lost"] == pytest.approx(100.0)  # 30 + 60 + 10 s
    assert (top["failed"], top["budget_exhausted"], top["degraded"], top["rejected"]) == (1, 1, 1, 0)
    assert top["example_task_ids"] == ["a3", "a2", "a1"]  # newest end first
    assert rows[1]["rejected"] == 1


def test_ties_break_on_seconds_lost(con, store):
    insert(con, tasks=[task("x", "failed", end_s=1, duration_ms=1000, **TOOL),
                       task("y", "failed", end_s=1, duration_ms=5000, **RATE)])
    assert [r["ffh_reason"] for r in root_causes(store, START, END)] == ["rate_limited", "server_error"]


def test_examples_capped_at_five(con, store):
    insert(con, tasks=[task(f"t{i}", "failed", end_s=i, **TOOL) for i in range(8)])
    (row,) = root_causes(store, START, END)
    assert row["example_task_ids"] == ["t7", "t6", "t5", "t4", "t3"]


def test_empty_window(blamed):
    assert root_causes(blamed, T0 + 3600 * NS, T0 + 7200 * NS) == []


def test_series_shares_per_bucket(blamed):
    rows = root_cause_series(blamed, START, END, 30 * NS)
    got = [(r["bucket_ns"] - T0) // NS for r in rows], [(r["ffh_reason"], r["tasks"]) for r in rows]
    # [0,30): a1 a2 timeout, b1 rate; [30,60): a3 timeout, c1 c2 tool
    assert got == ([0, 0, 30, 30], [("timeout", 2), ("rate_limited", 1),
                                    ("server_error", 2), ("timeout", 1)])
    assert [r["share"] for r in rows] == pytest.approx([2 / 3, 1 / 3, 2 / 3, 1 / 3])
