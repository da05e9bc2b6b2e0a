"""Figures: pure functions from query API JSON to Plotly figures."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from agentsla.dashboard import figures, tables

NS = 1_000_000_000
T0 = 1_700_000_000 * NS


def _span(span_id, start_ms, end_ms, children=(), **extra):
    return {"span_id": span_id, "start_ns": T0 + start_ms * 1_000_000,
            "end_ns": T0 + end_ms * 1_000_000, "duration_ms": float(end_ms - start_ms),
            "children": list(children), **extra}


TASK = {
    "task_id": "t1", "budget_total_ms": 6000.0,
    "first_failing_hop": {"kind": "tool", "name": "crm", "reason": "timeout",
                          "span_id": "tool1", "detail_span_id": None},
    "spans": [_span("root", 0, 8000, hop_kind="gateway", hop_name="POST /agent",
                    budget_remaining_ms=6000.0, children=[
        _span("m0", 10, 500, hop_kind="model", hop_name="gpt-4o", retry_attempt=0,
              is_error=True, error_type="rate_limited"),
        _span("m1", 600, 900, hop_kind="model", hop_name="gpt-4o", retry_attempt=1),
        _span("fb", 950, 1500, hop_kind="model", hop_name="backup", fallback_used=True),
        _span("tool1", 1600, 7900, hop_kind="tool", hop_name="crm", is_error=True,
              error_type="timeout", budget_remaining_ms=4400.0),
    ])],
}


def test_trace_waterfall_marks_first_failing_hop_retries_fallbacks_and_budget() -> None:
    fig = figures.trace_waterfall(TASK)
    bars = fig.data[0]
    assert bars.orientation == "h"
    assert list(bars.base) == [0.0, 10.0, 600.0, 950.0, 1600.0]  # ms since the task started
    assert list(bars.x) == [8000.0, 490.0, 300.0, 550.0, 6300.0]
    colors = list(bars.marker.color)
    assert colors[4] == figures.FAIL_COLOR and colors.count(figures.FAIL_COLOR) == 1
    assert list(bars.marker.line.width) == [0, 0, 0, 0, 3]
    ticks = list(fig.layout.yaxis.ticktext)
    assert ticks[0] == "gateway POST /agent"
    assert ticks[2].strip() == "model gpt-4o ↻ retry 1"
    assert ticks[3].strip() == "model backup ⇢ fallback"
    assert ticks[1].startswith("\u2003")  # children are indented
    deadlines = fig.data[1]
    assert list(deadlines.x) == [6000.0, 1600.0 + 4400.0]
    assert any(s.x0 == 6000.0 for s in fig.layout.shapes)  # the budget line
    assert any(a.text == "first failing hop" for a in fig.layout.annotations)


def test_trace_waterfall_marks_a_consumer_joined_by_its_link() -> None:
    """A queue consumer's entry nested under the producer's span (the API's `via_link`)."""
    task = {"spans": [_span("gw", 0, 3600, hop_kind="gateway", hop_name="POST /run", children=[
        _span("send", 1, 2, hop_kind="queue", hop_name="send tasks", children=[
            _span("process", 5, 3500, hop_kind="queue", hop_name="process tasks",
                  via_link=True)])])]}
    ticks = list(figures.trace_waterfall(task).layout.yaxis.ticktext)
    assert [t.strip() for t in ticks] == ["gateway POST /run", "queue send tasks",
                                          "queue process tasks ⤷ via link"]
    assert ticks[2].startswith("\u2003" * 2)


def test_trace_waterfall_without_spans_says_so() -> None:
    fig = figures.trace_waterfall({"spans": []})
    assert fig.layout.annotations[0].text == "This task has no spans stored"


SERIES = [
    {"bucket_ns": T0, "success_rate": 0.9, "gateway_success_rate": 1.0, "degraded_rate": 0.1,
     "budget_exhausted_rate": 0.0, "success": 9, "degraded": 1, "failed": 0},
    {"bucket_ns": T0 + 60 * NS, "success_rate": None, "gateway_success_rate": None,
     "degraded_rate": None, "budget_exhausted_rate": None, "success": 0, "failed": 0},
]


def test_success_over_time_keeps_gaps_and_shows_gateway_beside_tasks() -> None:
    fig = figures.success_over_time(SERIES)
    names = [t.name for t in fig.data]
    assert names[:2] == ["task success", "gateway success"]
    assert list(fig.data[0].y) == [0.9, None]
    assert fig.layout.yaxis.tickformat == ".0%"


def test_traffic_stacks_only_outcomes_that_occur() -> None:
    fig = figures.traffic_over_time(SERIES)
    assert [t.name for t in fig.data] == ["success", "degraded"]
    assert fig.layout.barmode == "stack"


CAUSES = [
    {"ffh_kind": "model", "ffh_name": "gpt-4o", "ffh_reason": "rate_limited", "tasks": 6,
     "share": 0.6, "cumulative_share": 0.6, "seconds_lost": 12.0, "example_task_ids": ["a"]},
    {"ffh_kind": "tool", "ffh_name": "crm", "ffh_reason": "timeout", "tasks": 4, "share": 0.4,
     "cumulative_share": 1.0, "seconds_lost": 30.5, "example_task_ids": ["b"]},
]


def test_pareto_bars_and_cumulative_line() -> None:
    fig = figures.pareto(CAUSES)
    assert list(fig.data[0].x) == ["model gpt-4o · rate limited", "tool crm · timeout"]
    assert list(fig.data[0].y) == [6, 4]
    assert list(fig.data[1].y) == [0.6, 1.0]
    assert fig.data[1].yaxis == "y2"


def test_causes_over_time_folds_the_tail_into_other() -> None:
    series = [{"bucket_ns": T0 + i * NS, "ffh_kind": "tool", "ffh_name": f"t{i}",
               "ffh_reason": "timeout", "tasks": 10 - i} for i in range(4)]
    fig = figures.causes_over_time(series, top=2)
    assert [t.name for t in fig.data] == ["tool t0 · timeout", "tool t1 · timeout", "other causes"]
    assert sum(fig.data[2].y) == 8 + 7


HOPS = [
    {"hop_kind": "model", "hop_name": "gpt-4o", "calls": 100, "errors": 5, "timeouts": 2,
     "timeout_rate": 0.02, "rate_limited": 3, "rate_limited_rate": 0.03, "circuit_open": 0,
     "circuit_open_rate": 0.0, "latency_p50_ms": 800.0, "latency_p95_ms": 4000.0,
     "latency_p99_ms": 9000.0, "attempts_per_call": 1.3, "ttft_p50_ms": 300.0},
    {"hop_kind": "tool", "hop_name": "search", "calls": 50, "errors": 0, "timeouts": 0,
     "rate_limited": 0, "circuit_open": 0, "latency_p50_ms": 90.0, "latency_p95_ms": 200.0,
     "latency_p99_ms": 400.0},
]


def test_hop_figures() -> None:
    latency = figures.hop_latency(HOPS)
    assert [t.name for t in latency.data] == ["p50", "p95", "p99"]
    assert list(latency.data[2].x) == [400.0, 9000.0]  # busiest hop drawn at the top
    assert latency.layout.xaxis.type == "log"
    failures = figures.hop_failure_rates(HOPS)
    assert list(failures.data[0].y) == ["model gpt-4o"]  # hops without failures are left out
    assert list(failures.data[1].x) == [0.03]
    heat = figures.hop_heatmap([dict(HOPS[0], bucket_ns=T0), dict(HOPS[1], bucket_ns=T0 + NS)])
    assert isinstance(heat.data[0], go.Heatmap)
    assert [list(row) for row in heat.data[0].z] == [[4000.0, None], [None, 200.0]]


HOP_SERIES = [  # sparse, as /api/v1/hops returns it: the tool had no call in the middle bucket
    {"bucket_ns": T0, "hop_kind": "tool", "hop_name": "search", "calls": 2, "error_rate": 0.5,
     "latency_p95_ms": 900.0},
    {"bucket_ns": T0 + 2 * 60 * NS, "hop_kind": "tool", "hop_name": "search", "calls": 1,
     "error_rate": 0.0, "latency_p95_ms": 100.0},
    {"bucket_ns": T0 + 60 * NS, "hop_kind": "model", "hop_name": "gpt-4o", "calls": 9,
     "error_rate": 0.25, "latency_p95_ms": 4000.0},
]


@pytest.mark.parametrize("metric, window, rows, columns, label", [
    # busiest hop (9 calls) on top; without a window, only the buckets seen
    ("error_rate", None, [[None, 0.25, None], [0.5, None, 0.0]], 3, "Error rate"),
    # the answer's window: every minute of [T0, T0 + 4 min) is a column, quiet ones empty
    ("latency_p95_ms", {"from_ns": T0, "to_ns": T0 + 4 * 60 * NS, "step_s": 60.0},
     [[None, 4000.0, None, None], [900.0, None, 100.0, None]], 4, "p95 latency"),
])
def test_hop_heatmap_rows_columns_and_metric(metric, window, rows, columns, label) -> None:
    heat = figures.hop_heatmap(HOP_SERIES, metric, window=window).data[0]
    assert list(heat.y) == ["model gpt-4o", "tool search"]
    assert [list(r) for r in heat.z] == rows and len(heat.x) == columns
    assert heat.colorbar.title.text == label


def test_budget_waterfall_floats_each_kind_to_the_duration_then_the_budget() -> None:
    fig = figures.budget_waterfall({
        "avg_duration_ms": 3000.0, "avg_budget_ms": 10000.0,
        "by_hop_kind": [{"hop_kind": "model", "avg_ms_per_task": 2000.0},
                        {"hop_kind": "tool", "avg_ms_per_task": 1000.0}]})
    bars = fig.data[0]
    assert bars.type == "bar"  # the dashboard's plotly.js bundle has no waterfall trace
    assert list(bars.x) == ["model", "tool", "task duration (avg)", "unused budget"]
    # each bar spans [base, base + y]: model 0-2 s, tool 2-3 s, the duration 0-3 s, then the
    # unused 7 s on top of it up to the 10 s budget
    assert [(b, b + v) for b, v in zip(bars.base, bars.y)] == [
        (0, 2000.0), (2000.0, 3000.0), (0, 3000.0), (3000.0, 10000.0)]


def test_burn_rates_one_bar_group_per_task_type() -> None:
    fig = figures.burn_rates([{"task_type": "chat", "burn_rates": {"5m": 2.0, "1h": None}},
                              {"task_type": None, "burn_rates": {"5m": 0.5, "1h": 0.1}}])
    assert [t.name for t in fig.data] == ["chat", "(no type)"]
    assert list(fig.data[0].x) == ["5m", "1h"]


def test_empty_inputs_give_a_message_not_an_error() -> None:
    for fig in (figures.pareto([]), figures.hop_latency([]), figures.success_over_time([]),
                figures.budget_waterfall({}), figures.burn_rates([]), figures.hop_heatmap([])):
        assert fig.layout.annotations and fig.layout.xaxis.visible is False


def test_tables_format_for_people() -> None:
    row = tables.per_task_type([{"task_type": "chat", "finished": 1234, "success_rate": 0.5,
                                 "latency_p95_ms": 4500.0}])[0]
    assert (row["finished"], row["task success"], row["p95"], row["failed"]) == \
        ("1,234", "50.0%", "4.5 s", "—")
    assert tables.root_cause_rows(CAUSES)[1]["time lost"] == "30.5 s"
    assert tables.hop_rows(HOPS)[0]["attempts/call"] == "1.30×"
    assert tables.finding_evidence({"p95_ms": 4500.0, "retry_rate": 0.25, "calls": 1200}) == [
        {"evidence": "p95 ms", "value": "4.5 s"}, {"evidence": "retry rate", "value": "25.0%"},
        {"evidence": "calls", "value": "1,200"}]
