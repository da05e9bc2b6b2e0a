"""Findings over logical calls read from the stored call_id/attempt (issue #12, #13), through the
real TaskWriter: unnumbered retries are attempts, a tool's client and server span one execution."""

from __future__ import annotations

import pytest

from shapes import Trace
from spanfactory import BASE_NS

from agentsla.queries.findings import find_findings

EVERYTHING = (BASE_NS - 10**12, BASE_NS + 10**15)
RATE_LIMITED = {"error_type": "rate_limited", "http_status": 429, "status_code": "error"}


def _found(load, traces: list[Trace], kind: str) -> list[dict]:
    rows = [r for t in traces for r in t.rows]
    return [f for f in find_findings(load(rows), *EVERYTHING, None, {}) if f["type"] == kind]


def _unnumbered_masked_task(at_ms: float) -> Trace:
    # 429, 429, then 200, as plain GenAI spans without retry.attempt: each repeat started after
    # the failed one ended, so the three spans are one call whose 429s the retries absorbed.
    t = Trace(at_ms=at_ms, root_end_ms=4_000)
    agent = t.child(t.root, "agent", "planner", 5, 3_990)
    t.child(agent, "model", "gpt-4o", 10, 110, **RATE_LIMITED)
    t.child(agent, "model", "gpt-4o", 1_110, 1_210, **RATE_LIMITED)
    t.child(agent, "model", "gpt-4o", 2_210, 3_000)
    return t


def test_unnumbered_429s_absorbed_by_retries_are_rate_limit_masking(load):
    found = _found(load, [_unnumbered_masked_task(i * 10_000) for i in range(3)],
                   "rate_limit_masking")
    assert [f["rule"] for f in found] == ["absorbed_429s"]
    # 3 calls, each first start 10 ms to last end 3000 ms: 2990 ms; 6 absorbed 429s
    assert {k: found[0]["evidence"][k] for k in ("calls", "masked_calls", "absorbed_429s",
                                                  "masked_p99_ms", "masked_task_success")} == {
        "calls": 3, "masked_calls": 3, "absorbed_429s": 6,
        "masked_p99_ms": pytest.approx(2990.0, rel=0.011),  # from the histogram (docs/findings.md)
        "masked_task_success": 1.0}


def _clean_call_task(at_ms: float, latency_ms: float) -> Trace:
    t = Trace(at_ms=at_ms, root_end_ms=latency_ms + 1_000)
    agent = t.child(t.root, "agent", "planner", 5, latency_ms + 500)
    t.child(agent, "model", "gpt-4o", 10, 10 + latency_ms)
    return t


def test_the_clean_p99_is_within_1_1_percent_of_the_exact_one(load):
    # 300 clean calls of 100 ms + i × 37.3 ms and 20 calls absorbing two 429s each (2990 ms):
    # both p99s are read from the exponential histograms the rollups keep (docs/rollups.md),
    # within 1.1 % of linear interpolation between the values at rank (n - 1) × 0.99, as
    # quantile_cont computes it.
    latencies = sorted(100 + i * 37.3 for i in range(300))
    traces = [_clean_call_task(i * 20_000, ms) for i, ms in enumerate(latencies)]
    traces += [_unnumbered_masked_task(10_000 + i * 20_000) for i in range(20)]
    (found,) = _found(load, traces, "rate_limit_masking")
    rank = (len(latencies) - 1) * 0.99
    low = int(rank)
    exact = latencies[low] + (rank - low) * (latencies[low + 1] - latencies[low])
    assert found["evidence"]["masked_p99_ms"] == pytest.approx(2990.0, rel=0.011)
    clean = found["evidence"]["clean_p99_ms"]
    assert clean != round(exact, 3)  # the histogram's value, not the exact one
    assert abs(clean - exact) <= 0.011 * exact


def test_unnumbered_retries_count_as_attempts_per_call(load):
    # Ten tasks, each one call of three attempts (429, 429, 200): 3 attempts per logical call.
    found = _found(load, [_unnumbered_masked_task(i * 10_000) for i in range(10)],
                   "retry_amplification")
    per_call = [f for f in found if f["rule"] == "attempts_per_call"]
    assert [(f["hop"], f["evidence"]["calls"], f["evidence"]["attempts_per_call"])
            for f in per_call] == [({"kind": "model", "name": "gpt-4o"}, 10, 3.0)]


def test_agent_loop_calling_a_model_again_is_not_a_retry(load):
    # Ten tasks whose agent calls the model three times, each call fine: 30 calls of 1 attempt.
    traces = []
    for i in range(10):
        t = Trace(at_ms=i * 10_000, root_end_ms=4_000)
        agent = t.child(t.root, "agent", "planner", 5, 3_990)
        for step in range(3):
            t.child(agent, "model", "gpt-4o", 10 + step * 1_000, 900 + step * 1_000)
        traces.append(t)
    assert _found(load, traces, "retry_amplification") == []


def _charge(t: Trace, parent: dict, key: str, start: float, end: float) -> dict:
    return t.child(parent, "tool", "charge_card", start, end, idempotency_key=key)


def test_client_and_server_span_of_one_execution_are_not_a_duplicate(load):
    # The agent's client span of the tool carries the tool service's server span (through an
    # HTTP client span in between); both carry the key: one execution.
    t = Trace(root_end_ms=2_000)
    client = _charge(t, t.root, "order-1", 10, 900)
    http = t.child(client, "other", "POST /charge", 20, 890)
    _charge(t, http, "order-1", 30, 880)
    assert _found(load, [t], "duplicate_side_effect") == []


def test_two_executions_of_one_key_are_a_duplicate(load):
    # The same order charged by two client calls, each seen with its own server span: two
    # executions, one extra. Neither client span contains the other.
    t = Trace(root_end_ms=3_000)
    first = _charge(t, t.root, "order-2", 10, 900)
    first_server = _charge(t, first, "order-2", 20, 890)
    second = _charge(t, t.root, "order-2", 1_000, 1_900)
    second_server = _charge(t, second, "order-2", 1_010, 1_890)
    found = _found(load, [t], "duplicate_side_effect")
    assert [(f["evidence"]["duplicated_keys"], f["evidence"]["extra_executions"],
             f["evidence"]["max_executions"]) for f in found] == [(1, 1, 2)]
    # the examples name the executions: the innermost spans, the two server spans
    assert {e["span_id"] for e in found[0]["examples"]} == {first_server["span_id"],
                                                            second_server["span_id"]}


@pytest.mark.parametrize("lookback,found", [({}, []), ({"duplicate_lookback_s": "2d"}, [1])])
def test_an_earlier_execution_is_looked_for_as_far_as_the_lookback(load, lookback, found):
    # The same order charged 25 h apart, in two tasks: with the default lookback (24 h) a
    # window holding only the second charge (from 24 h 2 min after the first) does
    # not reach the first; with 2 days it does.
    first, second = Trace(root_end_ms=2_000), Trace(at_ms=25 * 3_600_000, root_end_ms=2_000)
    _charge(first, first.root, "order-4", 10, 900)
    _charge(second, second.root, "order-4", 10, 900)
    store = load([r for t in (first, second) for r in t.rows])
    window = (BASE_NS + (24 * 3_600 + 120) * 10**9, EVERYTHING[1])  # widened to whole minutes
    assert [f["evidence"]["extra_executions"] for f in find_findings(store, *window, None, lookback)
            if f["type"] == "duplicate_side_effect"] == found


def test_one_client_call_executed_twice_by_the_server_is_a_duplicate(load):
    # One client span, two server executions under it (the HTTP layer resent the request and
    # the tool did not de-duplicate): the client call carries both, the two count.
    t = Trace(root_end_ms=3_000)
    client = _charge(t, t.root, "order-3", 10, 1_900)
    _charge(t, client, "order-3", 20, 900)
    _charge(t, client, "order-3", 1_000, 1_800)
    found = _found(load, [t], "duplicate_side_effect")
    assert [f["evidence"]["extra_executions"] for f in found] == [1]


def test_long_calls_without_timeout_count_the_distinct_tasks_that_ended_badly(load):
    # A crawler without a timeout: two failed tasks with long calls (one of them two), a
    # successful task with one, and ten tasks with a quick call. 4 long calls of 14, and 2 bad
    # tasks among those with a long call (the failed task with two counts once).
    def task(at_ms: float, durations: list[float], failed: bool) -> Trace:
        error = {"error_type": "internal", "status_code": "error"} if failed else {}
        t = Trace(at_ms=at_ms, root_end_ms=sum(durations) + 1_000, **error)
        clock = 10.0
        for duration in durations:
            t.child(t.root, "tool", "crawler", clock, clock + duration, hop_timeout_ms=0)
            clock += duration + 10
        return t
    traces = [task(0, [40_000], True), task(100_000, [35_000, 45_000], True),
              task(200_000, [50_000], False)]
    traces += [task(300_000 + i * 5_000, [1_000], False) for i in range(10)]
    (found,) = _found(load, traces, "missing_timeout")
    assert {k: found["evidence"][k] for k in ("long_calls", "calls", "bad_tasks")} == {
        "long_calls": 4, "calls": 14, "bad_tasks": 2}


def test_unnumbered_retry_has_fewer_attempts_left_for_budget_inversion(load):
    # retry.max 2 (3 attempts) of a 20 s timeout under a 60 s gateway. The first attempt, a
    # quick 429, may still make 3 attempts: 60 s > the ~60 s left, inverted. Its unnumbered
    # retry is attempt 1 and may make 2: 40 s fits the ~59 s left. So 1 of 2 calls is inverted.
    t = Trace(root_end_ms=2_000)
    model = {"hop_timeout_ms": 20_000, "retry_max": 2}
    t.child(t.root, "model", "gpt-4o", 10, 110, **model, **RATE_LIMITED)
    t.child(t.root, "model", "gpt-4o", 1_110, 1_900, **model)
    found = _found(load, [t], "budget_inversion")
    assert [(f["evidence"]["inverted_calls"], f["evidence"]["calls"], f["evidence"]["attempts"])
            for f in found] == [(1, 2, 3)]
