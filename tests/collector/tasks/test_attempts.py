"""Logical calls and attempt numbers as materialization computes them (docs/tasks.md, Attempts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from agentsla.collector.tasks.materialize import materialize
from agentsla.config import TasksConfig
from spanfactory import TRACE_ID, make_trace, ms

CONFIG = TasksConfig(default_budget=300.0, lost_grace=60.0, task_cache_spans=1000,
                     retention=86400.0, retention_interval=3600.0)
RATE_LIMITED = {"error_type": "rate_limited", "http_status": 429, "status_code": "error"}
ROOT_AND_AGENT = [
    {"span_id": "gw", "hop_kind": "gateway", "span_kind": "server", "start_ms": 0,
     "end_ms": 10_000, "http_status": 200},
    {"span_id": "ag", "parent": "gw", "hop_kind": "agent", "agent": "planner", "start_ms": 5,
     "end_ms": 9_990},
]


def model(span_id: str, start_ms: float, end_ms: float, **kw: Any) -> dict[str, Any]:
    return {"span_id": span_id, "parent": "ag", "hop_kind": "model", "model": "gpt-4o",
            "span_kind": "client", "start_ms": start_ms, "end_ms": end_ms, **kw}


@dataclass
class Case:
    calls: list[dict[str, Any]]          # the model spans under the agent
    expected: dict[str, tuple[str, int]]  # span id -> (call_id, attempt), written by hand
    outcome: str = "success"
    retries: int = 0


CASES = {
    # Numbered retries: 429, 429, then success: one call of three attempts.
    "numbered_retries": Case(
        [model("m0", 100, 200, retry_attempt=0, **RATE_LIMITED),
         model("m1", 300, 400, retry_attempt=1, **RATE_LIMITED),
         model("m2", 500, 900, retry_attempt=2)],
        {"m0": ("m0", 0), "m1": ("m0", 1), "m2": ("m0", 2)}, retries=2),
    # The same without numbers (plain GenAI spans): each repeat started after a failed sibling
    # ended, so it is its retry: still one call of three attempts, the 429s recovered.
    "unnumbered_retries_after_failures": Case(
        [model("m0", 100, 200, **RATE_LIMITED),
         model("m1", 300, 400, **RATE_LIMITED),
         model("m2", 500, 900)],
        {"m0": ("m0", 0), "m1": ("m0", 1), "m2": ("m0", 2)}, retries=2),
    # An agent loop calls the same model twice, both fine: two calls.
    "agent_loop_calls_twice": Case(
        [model("m0", 100, 900), model("m1", 1000, 1900)],
        {"m0": ("m0", 0), "m1": ("m1", 0)}),
    # A repeat after a success is a new call, even when that new call then fails and is retried:
    # m1 is not an attempt of m0, m2 is the retry of m1.
    "unnumbered_repeat_after_success_is_a_new_call": Case(
        [model("m0", 100, 900), model("m1", 1000, 1100, **RATE_LIMITED),
         model("m2", 1200, 1900)],
        {"m0": ("m0", 0), "m1": ("m1", 0), "m2": ("m1", 1)}, retries=1),
    # The model timed out, the caller failed over to a backup model, and a later step calls the
    # primary again: not a retry of the timed-out call (the caller did something else between).
    "repeat_after_a_fallback_is_a_new_call": Case(
        [model("m0", 100, 8100, error_type="timeout", status_code="error"),
         model("b0", 8110, 9000, model="claude-3-5-sonnet", fallback_used=True),
         model("m1", 9100, 9900)],
        {"m0": ("m0", 0), "b0": ("b0", 0), "m1": ("m1", 0)}, outcome="degraded"),
    # A sibling that started while the failed one still ran is a parallel call, not its retry.
    "parallel_unnumbered_siblings_are_separate_calls": Case(
        [model("m0", 100, 500, **RATE_LIMITED), model("m1", 200, 900)],
        {"m0": ("m0", 0), "m1": ("m1", 0)}),
    # The OpenTelemetry JS SDK stamps starts in whole milliseconds, so a retry started right
    # after a failure can read as starting up to 1 ms before that failure ended: still its
    # retry. Started 1.5 ms before, it ran alongside: a parallel call.
    "retry_seeming_to_start_within_a_millisecond_of_the_failure": Case(
        [model("m0", 100, 200.0007, **RATE_LIMITED), model("m1", 200, 900)],
        {"m0": ("m0", 0), "m1": ("m0", 1)}, retries=1),
    "sibling_started_over_a_millisecond_before_the_failure_ended": Case(
        [model("m0", 100, 201.5, **RATE_LIMITED), model("m1", 200, 900)],
        {"m0": ("m0", 0), "m1": ("m1", 0)}),
    # retry.attempt 0 starts a new call even right after a failure: the agent's next step.
    "numbered_zero_after_failure_starts_a_call": Case(
        [model("a0", 100, 200, retry_attempt=0, **RATE_LIMITED),
         model("a1", 300, 400, retry_attempt=1, **RATE_LIMITED),
         model("b0", 5000, 5100, retry_attempt=0)],
        {"a0": ("a0", 0), "a1": ("a0", 1), "b0": ("b0", 0)}, retries=1),
    # The first attempt was never exported: the call starts at its declared number 1, and an
    # unnumbered repeat after its failure continues the count.
    "declared_number_wins": Case(
        [model("m1", 300, 400, retry_attempt=1, **RATE_LIMITED), model("m2", 500, 900)],
        {"m1": ("m1", 1), "m2": ("m1", 2)}, retries=2),
}


@pytest.mark.parametrize("name", CASES)
def test_calls_and_attempts(name: str) -> None:
    case = CASES[name]
    done = materialize("task-1", make_trace(*ROOT_AND_AGENT, *case.calls), CONFIG,
                       ms(10**9), ms(0))
    got = {span_id: done.calls[(TRACE_ID, span_id)] for span_id in case.expected}
    assert got == case.expected
    assert (done.row["outcome"], done.row["retries"]) == (case.outcome, case.retries)


def test_spans_outside_sibling_runs_are_their_own_calls() -> None:
    # The root has no parent; the agent has no sibling of its hop: each is its own first try.
    done = materialize("task-1", make_trace(*ROOT_AND_AGENT), CONFIG, ms(10**9), ms(0))
    assert done.calls == {(TRACE_ID, "gw"): ("gw", 0), (TRACE_ID, "ag"): ("ag", 0)}


def test_http_resends_group_as_one_call() -> None:
    # OTel HTTP client spans (hop kind `other`): the first try carries no resend count, the
    # resend carries http.request.resend_count = 1 (normalized into retry_attempt). The 503 of
    # the first try is recovered, so the task succeeds with nothing to blame.
    http = {"parent": "ag", "hop_kind": "other", "name": "POST", "span_kind": "client"}
    done = materialize("task-1", make_trace(
        *ROOT_AND_AGENT,
        {"span_id": "h0", "start_ms": 100, "end_ms": 200, "http_status": 503,
         "error_type": "server_error", **http},
        {"span_id": "h1", "start_ms": 300, "end_ms": 400, "retry_attempt": 1, "http_status": 200,
         **http}), CONFIG, ms(10**9), ms(0))
    assert (done.calls[(TRACE_ID, "h0")], done.calls[(TRACE_ID, "h1")]) == (("h0", 0), ("h0", 1))
    assert (done.row["outcome"], done.row["retries"], done.row["ffh_kind"]) == ("success", 1, None)


def test_late_first_attempt_renumbers_the_call() -> None:
    # Spans arrive in any order; the numbering depends only on the set of spans.
    specs = [model("m1", 300, 400, **RATE_LIMITED), model("m2", 500, 900)]
    early = materialize("task-1", make_trace(*ROOT_AND_AGENT, *specs), CONFIG, ms(10**9), ms(0))
    late = materialize("task-1", make_trace(*ROOT_AND_AGENT, *specs,
                                            model("m0", 100, 200, **RATE_LIMITED)),
                       CONFIG, ms(10**9), ms(0))
    assert early.calls[(TRACE_ID, "m2")] == ("m1", 1)
    assert late.calls[(TRACE_ID, "m2")] == ("m0", 2)
