"""Task materialization: outcome, first failing hop, budgets, counts, lost tasks (docs/tasks.md)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from agentsla.collector.store.schema import TASK_COLUMN_NAMES
from agentsla.collector.tasks.materialize import lost_deadline_ns, materialize_task
from agentsla.config import TasksConfig
from agentsla.contract import ERROR_TYPES
from spanfactory import TRACE_ID, make_span, make_trace, ms

CONFIG = TasksConfig(default_budget=300.0, lost_grace=60.0, task_cache_spans=1000,
                     retention=86400.0, retention_interval=3600.0,
                     budgets_by_type={"report": 5.0})
FAR_FUTURE = ms(10**9)
NO_FFH = {"ffh_kind": None, "ffh_name": None, "ffh_reason": None, "ffh_span_id": None,
          "ffh_detail_span_id": None}
ERROR = {"status_code": "error"}
FAILED_ROOT = {"status_code": "error", "http_status": 502, "error_type": "server_error"}


# Span specs of the usual agent platform shape: gateway → agent → model / tool calls.
def gateway(**kw: Any) -> dict[str, Any]:
    return {"span_id": "gw", "name": "POST /v1/tasks", "span_kind": "server",
            "hop_kind": "gateway", "start_ms": 0, "end_ms": 1000, **kw}


def agent(**kw: Any) -> dict[str, Any]:
    return {"span_id": "ag", "parent": "gw", "hop_kind": "agent", "agent": "planner",
            "start_ms": 5, "end_ms": 990, **kw}


def model(span_id: str, **kw: Any) -> dict[str, Any]:
    return {"span_id": span_id, "parent": "ag", "hop_kind": "model", "model": "gpt-4o",
            "span_kind": "client", "start_ms": 10, "end_ms": 100, **kw}


def tool(span_id: str, **kw: Any) -> dict[str, Any]:
    return {"span_id": span_id, "parent": "ag", "hop_kind": "tool", "tool": "web_search",
            "start_ms": 10, "end_ms": 100, **kw}


def ffh(kind: str, name: str, reason: str, span_id: str, detail: str | None = None) -> dict:
    return {"ffh_kind": kind, "ffh_name": name, "ffh_reason": reason, "ffh_span_id": span_id,
            "ffh_detail_span_id": detail}


def materialize(spans: list[dict], now_ns: int = FAR_FUTURE, first_seen_ns: int = ms(0),
                config: TasksConfig = CONFIG) -> dict[str, Any]:
    return materialize_task("task-1", spans, config, now_ns, first_seen_ns)


@dataclass
class Case:
    specs: list[dict[str, Any]]
    expect: dict[str, Any]
    now_ns: int = FAR_FUTURE
    first_seen_ns: int = ms(0)
    extra: dict[str, Any] = field(default_factory=dict)


CASES: dict[str, Case] = {
    # The gateway gives up (504) at 60 s while the agent's model call runs to 119 s: the model
    # is blamed, and since it did not fail on its own, the reason is timeout.
    "gateway_504_model_in_flight": Case(
        [gateway(end_ms=60_000, status_code="error", http_status=504, error_type="timeout"),
         agent(end_ms=120_000),
         model("m1", end_ms=119_000, status_code="ok")],
        {"outcome": "failed", "finished": True, "gateway_ok": False, "http_status": 504,
         "error_type": "timeout", "duration_ms": 60_000.0, "budget_exhausted": False,
         "budget_total_ms": None, "budget_used_ratio": None,
         **ffh("model", "gpt-4o", "timeout", "m1")}),
    # Same, with the model's HTTP client span (not a hop) deepest in flight: reported at the
    # model (nearest hop ancestor), the client span is the detail.
    "reported_at_nearest_hop_with_detail": Case(
        [gateway(end_ms=60_000, status_code="error", http_status=504, error_type="timeout"),
         agent(end_ms=120_000),
         model("m1", end_ms=119_000),
         {"span_id": "h1", "parent": "m1", "name": "POST /v1/chat/completions",
          "span_kind": "client", "start_ms": 20, "end_ms": 118_000}],
        {"outcome": "failed", **ffh("model", "gpt-4o", "timeout", "m1", detail="h1")}),
    # A tool server called over plain HTTP (no hop attributes) answers 503 under the gateway:
    # the client span is reported itself, not the gateway that only passed the failure on.
    "bare_http_client_reported_itself": Case(
        [gateway(end_ms=3000, status_code="error", http_status=500),
         {"span_id": "h1", "parent": "gw", "name": "GET", "span_kind": "client",
          "hop_kind": "other", "start_ms": 20, "end_ms": 900, "http_status": 503, "error_type": "server_error",
          "status_code": "error"}],
        {"outcome": "failed", **ffh("other", "GET", "server_error", "h1")}),
    # A 429 retried once and recovered: success, one retry, nothing to blame.
    "retried_429_recovered": Case(
        [gateway(end_ms=3000, status_code="ok", http_status=200), agent(end_ms=2990),
         model("m0", start_ms=100, end_ms=200, http_status=429, error_type="rate_limited",
               status_code="error", retry_attempt=0, retry_max=2),
         model("m1", start_ms=1200, end_ms=2500, retry_attempt=1, retry_max=2,
               input_tokens=500, output_tokens=80)],
        {"outcome": "success", "retries": 1, "model_calls": 2, "span_count": 4,
         "gateway_ok": True, "input_tokens": 500, "output_tokens": 80, **NO_FFH}),
    # The same without retry numbering (plain GenAI spans): still one retry, still recovered.
    "retried_429_unnumbered": Case(
        [gateway(end_ms=3000), agent(end_ms=2990),
         model("m0", start_ms=100, end_ms=200, error_type="rate_limited", http_status=429),
         model("m1", start_ms=1200, end_ms=2500)],
        {"outcome": "success", "retries": 1, **NO_FFH}),
    # A tool times out at its 3 s limit, the cache serves instead: degraded, blame the tool.
    "tool_timeout_with_fallback": Case(
        [gateway(end_ms=5000, http_status=200), agent(end_ms=4990),
         tool("t1", start_ms=100, end_ms=3100, error_type="timeout", hop_timeout_ms=3000,
              **ERROR),
         {"span_id": "c1", "parent": "ag", "hop_kind": "cache", "name": "search-cache",
          "start_ms": 3100, "end_ms": 3150, "fallback_used": True, "fallback_kind": "cached"},
         model("m1", start_ms=3200, end_ms=4900)],
        {"outcome": "degraded", "fallback_used": True, "fallback_kind": "cached",
         "budget_exhausted": False, "gateway_ok": True, "tool_calls": 1,
         **ffh("tool", "web_search", "timeout", "t1")}),
    # Three attempts of a model all answer 500: failed; the first attempt failed first.
    "server_error_retries_exhausted": Case(
        [gateway(end_ms=10_000, status_code="error", http_status=502, error_type="server_error"),
         agent(end_ms=9900, error_type="server_error", **ERROR),
         *(model(f"m{i}", start_ms=10 + 2000 * i, end_ms=1000 + 2000 * i, http_status=500,
                 error_type="server_error", retry_attempt=i, retry_max=2) for i in range(3))],
        {"outcome": "failed", "retries": 2, "model_calls": 3,
         **ffh("model", "gpt-4o", "server_error", "m0")}),
    # A tool started with -50 ms of budget left, before the root ended, and failed.
    "budget_exhausted_by_remaining": Case(
        [gateway(end_ms=8000, status_code="error", http_status=500, error_type="server_error"),
         agent(end_ms=7990),
         model("m1", end_ms=6900, budget_remaining_ms=9990),
         tool("t1", start_ms=7000, end_ms=7001, budget_remaining_ms=-50, error_type="timeout")],
        {"outcome": "budget_exhausted", "budget_exhausted": True, "budget_total_ms": None,
         **ffh("tool", "web_search", "timeout", "t1")}),
    # The root lasted 6 s against a 5 s budget and failed.
    "budget_exhausted_root_longer": Case(
        [gateway(end_ms=6000, budget_total_ms=5000, status_code="error", http_status=504,
                 error_type="timeout"),
         agent(end_ms=5990), model("m1", end_ms=5900, error_type="timeout")],
        {"outcome": "budget_exhausted", "budget_total_ms": 5000.0, "budget_used_ratio": 1.2,
         "budget_exhausted": True, **ffh("model", "gpt-4o", "timeout", "m1")}),
    # Exactly the budget is not strictly longer: plain failed.
    "root_exactly_budget_is_failed": Case(
        [gateway(end_ms=5000, budget_total_ms=5000, status_code="error", http_status=504,
                 error_type="timeout"),
         agent(end_ms=4990), model("m1", end_ms=4900, error_type="timeout")],
        {"outcome": "failed", "budget_used_ratio": 1.0, "budget_exhausted": False}),
    # No span carries a budget; the config gives task type "report" 5 s; the root ran 5.5 s.
    "budget_exhausted_config_per_type": Case(
        [gateway(end_ms=5500, task_type="report", **FAILED_ROOT), agent(end_ms=4000),
         model("m1", end_ms=3000, error_type="server_error")],
        {"outcome": "budget_exhausted", "task_type": "report", "budget_total_ms": 5000.0,
         "budget_used_ratio": 1.1, **ffh("model", "gpt-4o", "server_error", "m1")}),
    # A tool starting after the root ended with no budget left is ghost work, not exhaustion.
    "ghost_work_is_not_exhaustion": Case(
        [gateway(end_ms=2000, **FAILED_ROOT), agent(end_ms=1990),
         model("m1", end_ms=1500, error_type="server_error"),
         tool("t9", start_ms=2500, end_ms=2600, budget_remaining_ms=-500, status_code="ok")],
        {"outcome": "failed", "budget_exhausted": False,
         **ffh("model", "gpt-4o", "server_error", "m1")}),
    # A successful task whose last tool started with 0 ms left: success, but the budget column
    # records the evidence.
    "success_keeps_budget_evidence": Case(
        [gateway(end_ms=1000, http_status=200), agent(), tool("t1", start_ms=900, end_ms=950,
                                                              budget_remaining_ms=0)],
        {"outcome": "success", "budget_exhausted": True, **NO_FFH}),
    # A backup model served without any error: degraded, blamed at the fallback span.
    "degraded_without_failure": Case(
        [gateway(), agent(),
         model("m1", model="claude-backup", fallback_used=True, fallback_kind="backup_model")],
        {"outcome": "degraded", **ffh("model", "claude-backup", "backup_model", "m1")}),
    # Degraded and out of budget (the fallback started with 0 ms left): budget_exhausted.
    "degraded_out_of_budget": Case(
        [gateway(), agent(),
         model("m1", model="claude-backup", fallback_used=True, fallback_kind="backup_model",
               budget_remaining_ms=0)],
        {"outcome": "budget_exhausted", "budget_exhausted": True,
         **ffh("model", "claude-backup", "backup_model", "m1")}),
    # A switch to another model is a fallback, not an attempt: the primary is not recovered.
    "switch_of_model_is_not_an_attempt": Case(
        [gateway(), agent(), model("m1", end_ms=200, error_type="rate_limited"),
         model("m2", model="claude-backup", start_ms=210, end_ms=500, fallback_used=True,
               fallback_kind="backup_model")],
        {"outcome": "degraded", "retries": 0, **ffh("model", "gpt-4o", "rate_limited", "m1")}),
    # budget.exhausted on the first failing hop (here a tool cut short) decides it.
    "budget_exhausted_flag_on_ffh": Case(
        [gateway(**FAILED_ROOT), agent(),
         tool("t1", error_type="timeout", budget_exhausted=True)],
        {"outcome": "budget_exhausted", **ffh("tool", "web_search", "timeout", "t1")}),
    # The root declares its outcome: that wins over a 500.
    "declared_success_wins": Case(
        [gateway(task_outcome="success", **FAILED_ROOT), agent(),
         tool("t1", error_type="connection_error")],
        {"outcome": "success", "gateway_ok": False, **NO_FFH}),
    # Declared failed on an otherwise fine root: failed, blamed at the failing tool.
    "declared_failed_is_blamed": Case(
        [gateway(task_outcome="failed", http_status=200), agent(),
         tool("t1", error_type="connection_error")],
        {"outcome": "failed", "gateway_ok": True,
         **ffh("tool", "web_search", "connection_error", "t1")}),
    # An outcome outside the declarable ones is ignored.
    "unknown_declared_outcome_ignored": Case(
        [gateway(task_outcome="great"), agent()], {"outcome": "success", **NO_FFH}),
    # The queue turned the task away and the gateway says so: rejected, blamed at the queue.
    "rejected_from_root_error_type": Case(
        [gateway(end_ms=6, http_status=503, error_type="rejected", **ERROR),
         {"span_id": "q1", "parent": "gw", "hop_kind": "queue", "name": "ingress",
          "start_ms": 1, "end_ms": 5, "error_type": "rejected"}],
        {"outcome": "rejected", "gateway_ok": False, "http_status": 503,
         **ffh("queue", "ingress", "rejected", "q1")}),
    # Rejected comes before the budget rules, even past the budget.
    "rejected_beats_budget": Case(
        [gateway(end_ms=9000, budget_total_ms=1000, error_type="rejected")],
        {"outcome": "rejected", "budget_exhausted": True,
         **ffh("gateway", "POST /v1/tasks", "rejected", "gw")}),
    # The user cancelled while the model ran: cancelled, no blame.
    "cancelled_from_root_error_type": Case(
        [gateway(end_ms=500, error_type="cancelled", **ERROR), agent(end_ms=2000),
         model("m1", end_ms=1900)],
        {"outcome": "cancelled", "finished": True, **NO_FFH}),
    # An agent and its tool fail at the same instant: the deeper span (the tool) is blamed.
    "tie_goes_to_the_deeper_span": Case(
        [gateway(**FAILED_ROOT), agent(end_ms=500, error_type="invalid_response"),
         tool("t1", start_ms=100, end_ms=500, error_type="connection_error")],
        {"outcome": "failed", **ffh("tool", "web_search", "connection_error", "t1")}),
    # Two tools in flight at the same depth when the gateway gives up: the longer-running one.
    "in_flight_tie_goes_to_longest": Case(
        [gateway(status_code="error", http_status=504, error_type="timeout"),
         agent(end_ms=3000),
         tool("ta", tool="a", start_ms=100, end_ms=1500),
         tool("tb", tool="b", start_ms=50, end_ms=2000)],
        {"outcome": "failed", **ffh("tool", "b", "timeout", "tb")}),
    # The in-flight descendant failed on its own later: its own reason, not timeout.
    "in_flight_descendant_own_reason": Case(
        [gateway(status_code="error", http_status=504, error_type="timeout"),
         agent(end_ms=1300), model("m1", end_ms=1200, error_type="server_error")],
        {"outcome": "failed", **ffh("model", "gpt-4o", "server_error", "m1")}),
    # The agent returned at 500 ms; its tool ran on (ghost work). The gateway was not waiting
    # on the tool when it failed, so the gateway itself is blamed.
    "ghost_descendant_not_waited_on": Case(
        [gateway(status_code="error", http_status=504, error_type="timeout"),
         agent(end_ms=500), tool("t9", start_ms=100, end_ms=3000)],
        {"outcome": "failed", **ffh("gateway", "POST /v1/tasks", "timeout", "gw")}),
    # A recovered attempt's own failing child is forgiven with it; the model failed the task.
    "recovered_attempt_subtree_forgiven": Case(
        [gateway(end_ms=5000, **FAILED_ROOT), agent(end_ms=4990),
         tool("t0", end_ms=1000, error_type="connection_error", retry_attempt=0),
         {"span_id": "h0", "parent": "t0", "name": "GET crm", "start_ms": 20, "end_ms": 990,
          "error_type": "connection_error"},
         tool("t1", start_ms=1100, end_ms=1500, retry_attempt=1),
         model("m1", start_ms=2000, end_ms=3000, error_type="server_error")],
        {"outcome": "failed", "retries": 1, **ffh("model", "gpt-4o", "server_error", "m1")}),
    # The same tool called twice, first fine, then failing: a new call, not a recovered retry.
    "later_failure_not_recovered": Case(
        [gateway(**FAILED_ROOT), agent(), tool("t0", end_ms=50),
         tool("t1", start_ms=60, end_ms=100, error_type="timeout")],
        {"outcome": "failed", "retries": 0, **ffh("tool", "web_search", "timeout", "t1")}),
    # An agent loop calls one model twice: the first call fails on every numbered attempt, the
    # second call (attempt 0 again) recovers its own 429. The second call's success does not
    # recover the first call: attempts are numbered per logical call.
    "later_call_does_not_recover_earlier_call": Case(
        [gateway(end_ms=9000, **FAILED_ROOT), agent(end_ms=8990),
         model("a0", start_ms=100, end_ms=200, error_type="rate_limited", retry_attempt=0),
         model("a1", start_ms=300, end_ms=400, error_type="rate_limited", retry_attempt=1),
         model("b0", start_ms=5000, end_ms=5100, error_type="rate_limited", retry_attempt=0),
         model("b1", start_ms=6000, end_ms=7000, retry_attempt=1)],
        {"outcome": "failed", "retries": 2, **ffh("model", "gpt-4o", "rate_limited", "a0")}),
    # GenAI-only spans (operation names, gen_ai.agent.name, usage tokens); the agent
    # recovered from a failed tool, so the task succeeded.
    "genai_only_shape": Case(
        [{"span_id": "srv", "name": "POST /v1/assist", "span_kind": "server",
          "hop_kind": "gateway", "start_ms": 0, "end_ms": 4000, "http_status": 200},
         {"span_id": "ia", "parent": "srv", "name": "invoke_agent support-bot",
          "operation": "invoke_agent", "hop_kind": "agent", "agent": "support-bot",
          "start_ms": 5, "end_ms": 3990},
         {"span_id": "c1", "parent": "ia", "name": "chat gpt-4o-mini", "operation": "chat",
          "span_kind": "client", "hop_kind": "model", "model": "gpt-4o-mini", "start_ms": 10,
          "end_ms": 1000, "input_tokens": 1200, "output_tokens": 60},
         {"span_id": "x1", "parent": "ia", "name": "execute_tool lookup_order",
          "operation": "execute_tool", "hop_kind": "tool", "tool": "lookup_order",
          "start_ms": 1010, "end_ms": 1500, "error_type": "connection_error", **ERROR},
         {"span_id": "c2", "parent": "ia", "name": "chat gpt-4o-mini", "operation": "chat",
          "span_kind": "client", "hop_kind": "model", "model": "gpt-4o-mini",
          "start_ms": 1510, "end_ms": 3900, "input_tokens": 1500, "output_tokens": 200}],
        {"outcome": "success", "agent": "support-bot", "model_calls": 2, "tool_calls": 1,
         "input_tokens": 2700, "output_tokens": 260, "root_span_id": "srv",
         "root_name": "POST /v1/assist", "retries": 0, "task_type": None, **NO_FFH}),
    # OpenInference-only spans: AGENT root (no gen_ai.agent.name), CHAIN (other), RETRIEVER
    # (tool), LLM (model) overflowing its context.
    "openinference_only_shape": Case(
        [{"span_id": "oa", "name": "research-agent", "operation": "AGENT", "hop_kind": "agent",
          "service_name": "rag-app", "start_ms": 0, "end_ms": 9000, **ERROR},
         {"span_id": "ch", "parent": "oa", "name": "RetrievalQA", "operation": "CHAIN",
          "hop_kind": "other", "start_ms": 10, "end_ms": 8990, **ERROR},
         {"span_id": "rt", "parent": "ch", "name": "retrieve", "operation": "RETRIEVER",
          "hop_kind": "tool", "start_ms": 20, "end_ms": 500},
         {"span_id": "llm", "parent": "ch", "name": "ChatAnthropic", "operation": "LLM",
          "hop_kind": "model", "model": "claude-3-5-sonnet", "start_ms": 600, "end_ms": 8000,
          "error_type": "context_overflow", "input_tokens": 210_000, **ERROR}],
        {"outcome": "failed", "agent": "research-agent", "service_name": "rag-app",
         "gateway_ok": False, "http_status": None, "input_tokens": 210_000, "output_tokens": 0,
         "tool_calls": 1, "model_calls": 1,
         **ffh("model", "claude-3-5-sonnet", "context_overflow", "llm")}),
    # Parent cycle a ↔ b plus a self-parented c: terminates; the cycle is cut at its earliest
    # span (b), so b (a model hop) reports the blame of its failing child a.
    "parent_cycle_with_root": Case(
        [gateway(end_ms=100, **FAILED_ROOT),
         {"span_id": "a", "parent": "b", "name": "inner", "start_ms": 10, "end_ms": 50,
          "error_type": "timeout"},
         {"span_id": "b", "parent": "a", "hop_kind": "model", "model": "m", "start_ms": 5,
          "end_ms": 60},
         {"span_id": "c", "parent": "c", "hop_kind": "tool", "tool": "t", "start_ms": 1,
          "end_ms": 500}],
        {"outcome": "failed", "span_count": 4, **ffh("model", "m", "timeout", "b", detail="a")}),
    # Only a cycle and a self-parented span, no root: terminates, still in progress.
    "parent_cycle_without_root": Case(
        [{"span_id": "a", "parent": "b", "start_ms": 10},
         {"span_id": "b", "parent": "a", "start_ms": 5},
         {"span_id": "c", "parent": "c", "start_ms": 1, "error_type": "timeout"}],
        {"outcome": "in_progress", "finished": False, "root_span_id": None,
         "trace_id": TRACE_ID, "start_ns": ms(1), "span_count": 3, **NO_FFH},
        now_ns=ms(1000)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_materialize_task(name: str) -> None:
    case = CASES[name]
    row = materialize(make_trace(*case.specs), case.now_ns, case.first_seen_ns)
    assert list(row) == list(TASK_COLUMN_NAMES)
    assert {k: row[k] for k in case.expect} == case.expect


# One trace shape per contract error type, with the outcome and first failing hop it yields.
ERROR_TYPE_CASES: dict[str, tuple[list[dict], str, tuple | None]] = {
    "timeout": ([gateway(end_ms=60_000, status_code="error", http_status=504,
                         error_type="timeout"),
                 agent(end_ms=120_000), model("m1", end_ms=119_000)],
                "failed", ("model", "gpt-4o")),
    "rate_limited": ([gateway(http_status=429, error_type="rate_limited", **ERROR),
                      agent(error_type="rate_limited"),
                      model("m0", http_status=429, error_type="rate_limited", retry_attempt=0),
                      model("m1", start_ms=200, end_ms=300, http_status=429,
                            error_type="rate_limited", retry_attempt=1)],
                     "failed", ("model", "gpt-4o")),
    "circuit_open": ([gateway(**FAILED_ROOT), agent(),
                      tool("t1", tool="payments", end_ms=11, error_type="circuit_open",
                           circuit_state="open")],
                     "failed", ("tool", "payments")),
    "connection_error": ([gateway(**FAILED_ROOT), agent(),
                          tool("t1", tool="crm", error_type="connection_error")],
                         "failed", ("tool", "crm")),
    "budget_exhausted": ([gateway(status_code="error", http_status=504, error_type="timeout"),
                          agent(), tool("t1", start_ms=985, end_ms=985,
                                        error_type="budget_exhausted", budget_exhausted=True)],
                         "budget_exhausted", ("tool", "web_search")),
    "server_error": ([gateway(**FAILED_ROOT), agent(),
                      model("m1", http_status=500, error_type="server_error")],
                     "failed", ("model", "gpt-4o")),
    "invalid_response": ([gateway(**FAILED_ROOT), agent(),
                          model("m1", error_type="invalid_response")],
                         "failed", ("model", "gpt-4o")),
    "context_overflow": ([gateway(**FAILED_ROOT), agent(),
                          model("m1", http_status=400, error_type="context_overflow")],
                         "failed", ("model", "gpt-4o")),
    "loop_limit": ([gateway(**FAILED_ROOT), agent(end_ms=900, error_type="loop_limit"),
                    model("m1")],
                   "failed", ("agent", "planner")),
    "rejected": ([gateway(end_ms=6, http_status=503, error_type="rejected"),
                  {"span_id": "q1", "parent": "gw", "hop_kind": "queue", "name": "ingress",
                   "start_ms": 1, "end_ms": 5, "error_type": "rejected"}],
                 "rejected", ("queue", "ingress")),
    "cancelled": ([gateway(error_type="cancelled"), agent(), model("m1")], "cancelled", None),
}


def test_every_error_type_has_a_case() -> None:
    assert set(ERROR_TYPE_CASES) == set(ERROR_TYPES)


@pytest.mark.parametrize("error_type", ERROR_TYPES)
def test_error_type_classified(error_type: str) -> None:
    specs, outcome, hop = ERROR_TYPE_CASES[error_type]
    row = materialize(make_trace(*specs))
    assert row["outcome"] == outcome
    if hop is None:
        assert row["ffh_kind"] is row["ffh_reason"] is None
    else:
        assert (row["ffh_kind"], row["ffh_name"], row["ffh_reason"]) == (*hop, error_type)


# A task whose gateway span never arrives: agent and model only, first seen at 4 s.
ORPHANS = [agent(end_ms=4000), model("m1", end_ms=3000)]
FIRST_SEEN = ms(4000)


@pytest.mark.parametrize("specs, deadline", [
    # No budget anywhere: default 300 s + 60 s grace after the first arrival.
    (ORPHANS, ms(4000 + 300_000 + 60_000)),
    # A budget carried by a non-root span: 20 s + 60 s.
    ([agent(end_ms=4000, budget_total_ms=20_000), model("m1")], ms(4000 + 20_000 + 60_000)),
    # The config's budget for the task type: 5 s + 60 s.
    ([agent(end_ms=4000, task_type="report"), model("m1")], ms(4000 + 5000 + 60_000)),
])
def test_lost_deadline(specs: list[dict], deadline: int) -> None:
    spans = make_trace(*specs)
    assert lost_deadline_ns(spans, CONFIG, FIRST_SEEN) == deadline
    before = materialize(spans, now_ns=deadline - 1, first_seen_ns=FIRST_SEEN)
    assert (before["outcome"], before["finished"], before["end_ns"]) == ("in_progress", False,
                                                                         None)
    lost = materialize(spans, now_ns=deadline, first_seen_ns=FIRST_SEEN)
    assert (lost["outcome"], lost["finished"], lost["end_ns"]) == ("lost", True, deadline)
    assert lost["duration_ms"] == (deadline - ms(5)) / 1e6
    assert lost["gateway_ok"] is None and lost["root_span_id"] is None
    assert lost["ffh_kind"] is None and lost["first_seen_ns"] == FIRST_SEEN


def test_unrooted_task_fields() -> None:
    row = materialize(make_trace(*ORPHANS), now_ns=ms(5000), first_seen_ns=FIRST_SEEN)
    assert row["trace_id"] == TRACE_ID and row["start_ns"] == ms(5)
    assert row["service_name"] == "svc" and row["agent"] == "planner"
    assert row["updated_ns"] == ms(5000) and row["duration_ms"] is None


def test_late_spans_change_the_result() -> None:
    stages = [
        # Agent and model only: the root has not arrived yet.
        ([agent(end_ms=120_000), model("m1", end_ms=119_000)], {"outcome": "in_progress"}),
        # The 504 root arrives: failed, blamed at the model that was still running.
        ([gateway(end_ms=60_000, http_status=504, error_type="timeout", **ERROR)],
         {"outcome": "failed", **ffh("model", "gpt-4o", "timeout", "m1")}),
        # The model's own HTTP span arrives late: the blame gains its detail.
        ([{"span_id": "h1", "parent": "m1", "name": "POST", "start_ms": 20,
           "end_ms": 118_000}],
         {"outcome": "failed", **ffh("model", "gpt-4o", "timeout", "m1", detail="h1")}),
    ]
    spans: list[dict] = []
    for specs, expect in stages:
        spans += make_trace(*specs)
        row = materialize(spans, now_ns=ms(200_000))
        assert {k: row[k] for k in expect} == expect


def test_root_arriving_after_lost_overrides_lost() -> None:
    spans = make_trace(*ORPHANS)
    assert materialize(spans, first_seen_ns=FIRST_SEEN)["outcome"] == "lost"
    row = materialize(spans + make_trace(gateway(end_ms=4100, http_status=200)),
                      first_seen_ns=FIRST_SEEN)
    assert (row["outcome"], row["end_ns"], row["root_span_id"]) == ("success", ms(4100), "gw")


def test_earliest_parentless_span_is_the_root() -> None:
    # A task spanning two traces, each with its own root: the earlier root is the task's.
    spans = make_trace(gateway(start_ms=500, end_ms=900, trace_id="b" * 32, span_id="gw2"),
                       gateway(end_ms=400, trace_id="a" * 32, http_status=200))
    row = materialize(spans)
    assert (row["root_span_id"], row["trace_id"], row["end_ns"]) == ("gw", "a" * 32, ms(400))


def test_no_spans() -> None:
    row = materialize([], now_ns=ms(1))
    assert list(row) == list(TASK_COLUMN_NAMES)
    assert (row["outcome"], row["span_count"], row["trace_id"]) == ("in_progress", 0, None)


def test_large_task_is_fast_and_iterative() -> None:
    # A 3,000-deep chain (no recursion limit) plus 3,000 siblings, all failing.
    chain = [make_span(span_id="s0", hop_kind="gateway", start_ms=0, end_ms=100_000,
                       **FAILED_ROOT)]
    chain += [make_span(span_id=f"s{i}", parent=f"s{i - 1}", hop_kind="tool", tool=f"t{i}",
                        start_ms=i / 100, end_ms=100_000 - i / 100, error_type="timeout")
              for i in range(1, 3000)]
    wide = [make_span(span_id=f"w{i}", parent="s0", hop_kind="model", model="m",
                      start_ms=i, end_ms=i + 1, error_type="rate_limited") for i in range(3000)]
    started = time.perf_counter()
    row = materialize(chain + wide)
    assert time.perf_counter() - started < 2.0
    assert row["span_count"] == 6000 and row["outcome"] == "failed"
    # Every wide attempt failed, so none is recovered: the first one failed first.
    assert (row["ffh_span_id"], row["ffh_reason"]) == ("w0", "rate_limited")
