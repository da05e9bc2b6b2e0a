"""Per-hop stats: attempts per logical call, rates and percentiles computed by hand."""

from __future__ import annotations

import pytest

from agentsla.queries.hops import hop_series, hop_stats
from queryrows import NS, T0, insert, span, task

START, END = T0, T0 + 60 * NS


@pytest.fixture
def calls(con, store):
    m = {"hop_kind": "model", "hop_name": "gpt-4"}
    insert(con, tasks=[task("t1", task_type="chat"), task("t2", task_type="search")], spans=[
        span("r", None, 0, 5000, hop_kind="gateway", hop_name="gw"),
        span("a", "r", 10, 4900, hop_name="planner"),
        # one logical call, three attempts: timeout, 429, then success
        span("m0", "a", 100, 1100, retry_attempt=0, error_type="timeout", **m),
        span("m1", "a", 1200, 1500, retry_attempt=1, error_type="rate_limited", **m),
        span("m2", "a", 1600, 2000, retry_attempt=2, ttft_ms=50.0, input_tokens=10,
             output_tokens=5, **m),
        # the agent's next step calls the model again: a second logical call (no retry.attempt)
        span("m3", "a", 2100, 2600, ttft_ms=150.0, input_tokens=20, output_tokens=7, **m),
        span("x", "a", 2700, 2900, hop_kind="tool", hop_name="search", error_type="circuit_open"),
        span("late", "a", 65_000, 70_000, **m),  # ends after the window
        span("o", None, 0, 100, task_id="t2", trace_id="e" * 32, **m),
    ])
    return store


def test_model_hop_attempts_rates_and_percentiles(calls):
    rows = hop_stats(calls, START, END, task_type="chat")
    model = rows[0]
    assert (model["hop_kind"], model["hop_name"]) == ("model", "gpt-4")  # most errors first
    assert (model["calls"], model["logical_calls"], model["attempts_per_call"]) == (4, 2, 2.0)
    assert (model["errors"], model["error_rate"]) == (2, 0.5)
    assert (model["timeout_rate"], model["rate_limited_rate"], model["circuit_open_rate"]) == (
        0.25, 0.25, 0.0)
    # durations 300 400 500 1000: p50 at 1.5 -> 450, p95 at 2.85 -> 925, p99 at 2.97 -> 985;
    # from histograms, within the stated 1.1 % (docs/rollups.md)
    assert (model["latency_p50_ms"], model["latency_p95_ms"], model["latency_p99_ms"]) == (
        pytest.approx(450, rel=0.011), pytest.approx(925, rel=0.011),
        pytest.approx(985, rel=0.011))
    # ttft 50 150: p50 100, p95 145
    assert (model["ttft_p50_ms"], model["ttft_p95_ms"]) == (pytest.approx(100, rel=0.011),
                                                            pytest.approx(145, rel=0.011))
    assert (model["input_tokens"], model["output_tokens"]) == (30, 12)


def test_other_hops_and_order(calls):
    rows = hop_stats(calls, START, END, task_type="chat")
    assert [(r["hop_kind"], r["hop_name"]) for r in rows] == [
        ("model", "gpt-4"), ("tool", "search"), ("agent", "planner"), ("gateway", "gw")]
    tool = rows[1]
    assert (tool["calls"], tool["circuit_open"], tool["circuit_open_rate"]) == (1, 1, 1.0)
    assert rows[3]["ttft_p50_ms"] is None


@pytest.mark.parametrize("filters, model_calls", [
    ({}, 5),                                  # t1's four plus t2's one
    ({"task_type": "search"}, 1),             # t2 only
    ({"hop_kind": "model"}, 5),
    ({"hop_kind": "model' or 1=1 --"}, None),  # bound: matches no hop
    ({"tenant_id": "acme"}, 5),
])
def test_filters(calls, filters, model_calls):
    rows = {(r["hop_kind"], r["hop_name"]): r for r in hop_stats(calls, START, END, **filters)}
    got = rows.get(("model", "gpt-4"))
    assert (got and got["calls"]) == model_calls


STEP = 2 * NS
#: Spans by end (s): o 0.1 (t2), m0 1.1, m1 1.5 | m2 2.0, m3 2.6, x 2.9 | a 4.9, r 5.0; late
#: ends after the window. Calls in the window: model 5, then agent, gateway, tool 1 each.
SERIES_CASES = [
    # kwargs, [(bucket start s, hop kind, calls)], oldest bucket first, busiest hop first
    ({}, [(0, "model", 3), (2, "model", 2), (2, "tool", 1), (4, "agent", 1),
          (4, "gateway", 1)]),
    # the two busiest: model, then agent (ties at one call broken by kind)
    ({"limit": 2}, [(0, "model", 3), (2, "model", 2), (4, "agent", 1)]),
    ({"limit": 1}, [(0, "model", 3), (2, "model", 2)]),
    ({"hop_kind": "tool"}, [(2, "tool", 1)]),
    ({"task_type": "search"}, [(0, "model", 1)]),      # t2's span only
    ({"tenant_id": "nobody"}, []),
]


@pytest.mark.parametrize("kwargs, expected", SERIES_CASES)
def test_series_buckets_by_end_and_keeps_the_busiest_hops(calls, kwargs, expected):
    rows = hop_series(calls, START, END, STEP, **kwargs)
    assert [((r["bucket_ns"] - T0) // NS, r["hop_kind"], r["calls"]) for r in rows] == expected


def test_series_rates_and_p95_per_bucket(calls):
    rows = {((r["bucket_ns"] - T0) // NS, r["hop_kind"]): r
            for r in hop_series(calls, START, END, STEP)}
    first = rows[(0, "model")]
    assert first["bucket"] == "2023-11-14T22:13:20.000Z" and first["hop_name"] == "gpt-4"
    # o 100 ms ok, m0 1000 ms timeout, m1 300 ms 429
    assert (first["error_rate"], first["timeout_rate"], first["rate_limited_rate"]) == (
        pytest.approx(2 / 3), pytest.approx(1 / 3), pytest.approx(1 / 3))
    # 100 300 1000: p95 at index 1.9 -> 300 + 0.9 * 700 = 930 (histograms: within 1.1 %)
    assert first["latency_p95_ms"] == pytest.approx(930, rel=0.011)
    # m2 ends exactly at 2 s: the bucket holding its end is [2, 4); m2 400 m3 500 -> p95 495
    second = rows[(2, "model")]
    assert (second["calls"], second["error_rate"], second["latency_p95_ms"]) == (
        2, 0.0, pytest.approx(495, rel=0.011))
    assert rows[(2, "tool")]["error_rate"] == 1.0  # circuit open is an error
    assert set(first) == {"bucket_ns", "bucket", "hop_kind", "hop_name", "calls", "error_rate",
                          "timeout_rate", "rate_limited_rate", "latency_p95_ms"}


def test_series_buckets_start_at_the_window_start(calls):
    # a window starting 0.5 s later: buckets [0.5, 2.5), [2.5, 4.5), [4.5, 6.5)
    rows = hop_series(calls, START + NS // 2, END, STEP, hop_kind="model")
    assert [(r["bucket_ns"] - T0, r["calls"]) for r in rows] == [(NS // 2, 3), (5 * NS // 2, 1)]
