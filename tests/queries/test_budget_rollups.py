"""/budget through the real writer: a late child moves self time between hop kinds in the rollups.

BASE_NS is 20 s into a minute; the window [M0, M0 + 2 min) holds the task's end as a whole
minute (rollups), the window [BASE_NS, ...) a ragged edge (raw task rows). Expected values are
written by hand from the story.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentsla.collector.store import rollups
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config
from agentsla.queries.budget import budget_waterfall
from agentsla.queries.engines.duckdb import DuckDBStore
from spanfactory import BASE_NS, make_span, ms

NS = 10**9
M0 = BASE_NS - 20 * NS
TRACE = "b" * 32


def _span(span_id: str, parent: str | None, kind: str, start_s: float, end_s: float,
          **kw) -> dict:
    return make_span(trace_id=TRACE, span_id=span_id * 16, parent=parent and parent * 16,
                     hop_kind=kind, start_ms=start_s * 1000, end_ms=end_s * 1000, **kw)


def _kinds(answer: dict) -> dict[str, tuple[int, float]]:
    return {r["hop_kind"]: (r["tasks_with_hop"], r["self_ms"]) for r in answer["by_hop_kind"]}


def test_a_late_child_moves_self_time_from_its_parent_in_the_rollups(con):
    writer = TaskWriter(con, load_config().tasks)
    store = DuckDBStore(con)
    # root 0..30 s with a budget of 60 s, an agent 1..29 s
    writer.write([_span("1", None, "gateway", 0, 30, task_type="chat", budget_total_ms=60_000.0),
                  _span("2", "1", "agent", 1, 29)], now_ns=ms(30_000))
    whole = (M0, M0 + 120 * NS)
    got = budget_waterfall(store, *whole)
    assert (got["tasks"], got["tasks_with_budget"], got["avg_budget_ms"]) == (1, 1, 60_000)
    assert _kinds(got) == {"agent": (1, 28_000), "gateway": (1, 2_000)}
    # the agent's model call (5..25 s) arrives after the root: the task is re-materialized
    writer.write([_span("3", "2", "model", 5, 25)], now_ns=ms(40_000))
    for window in (whole, (BASE_NS, M0 + 120 * NS), (BASE_NS + 29 * NS, BASE_NS + 31 * NS)):
        got = budget_waterfall(store, *window)
        assert _kinds(got) == {"model": (1, 20_000), "agent": (1, 8_000),
                               "gateway": (1, 2_000)}, window
        assert got["unused_budget_share"] == 0.5
        assert got["by_hop_kind"][0]["share_of_budget"] == pytest.approx(20 / 60)
        assert got == budget_waterfall(store, *window, raw=True)
    live = {t: rollups.summed_rows(con, t, r) for r in rollups.BUDGET_ROLLUPS
            for t in (r.table, r.table + rollups.HOURLY)}
    rollups.rebuild(con)
    assert live == {t: rollups.summed_rows(con, t, r) for r in rollups.BUDGET_ROLLUPS
                    for t in (r.table, r.table + rollups.HOURLY)}


def test_cancelled_and_lost_tasks_are_left_out(con):
    writer = TaskWriter(con, replace(load_config().tasks, default_budget=10.0, lost_grace=5.0))
    writer.write([_span("1", None, "gateway", 0, 3, task_outcome="cancelled"),
                  make_span(trace_id="c" * 32, span_id="4" * 16, parent="9" * 16,
                            hop_kind="model", start_ms=0, end_ms=2000)], now_ns=ms(3_000))
    writer.sweep_lost(now_ns=ms(60_000))  # the rootless trace is declared lost
    assert con.execute("select outcome from tasks order by all").fetchall() == [
        ("cancelled",), ("lost",)]
    got = budget_waterfall(DuckDBStore(con), M0, M0 + 300 * NS)
    assert (got["tasks"], got["by_hop_kind"], got["avg_duration_ms"]) == (0, [], None)
