"""Shape query API rows into tables for people: pure functions, formatted strings, no I/O."""

from __future__ import annotations

from typing import Mapping, Sequence

from agentsla.dashboard import fmt


def per_task_type(groups: Sequence[Mapping]) -> list[dict]:
    """One row per task type: traffic, success beside gateway success, other rates, latency."""
    return [{
        "task type": g.get("task_type") or "(none)",
        "finished": fmt.count(g.get("finished")),
        "task success": fmt.pct(g.get("success_rate")),
        "gateway success": fmt.pct(g.get("gateway_success_rate")),
        "degraded": fmt.pct(g.get("degraded_rate")),
        "failed": fmt.pct(g.get("failed_rate")),
        "budget exhausted": fmt.pct(g.get("budget_exhausted_rate")),
        "lost": fmt.count(g.get("lost")),
        "in progress": fmt.count(g.get("in_progress")),
        "p50": fmt.duration(g.get("latency_p50_ms")),
        "p95": fmt.duration(g.get("latency_p95_ms")),
        "p99": fmt.duration(g.get("latency_p99_ms")),
    } for g in groups]


def slo_rows(slos: Sequence[Mapping]) -> list[dict]:
    """One row per task type: objective, error budget remaining and each window's burn rate."""
    rows = []
    for s in slos:
        row = {"task type": s.get("task_type") or "(none)",
               "objective": fmt.pct(s.get("objective"), 2),
               "error budget left": fmt.pct(s.get("error_budget_remaining")),
               "good / bad": f"{fmt.count(s.get('good'))} / {fmt.count(s.get('bad'))}"}
        for window, burn in (s.get("burn_rates") or {}).items():
            row[f"burn {window}"] = fmt.ratio(burn, 1)
        rows.append(row)
    return rows


def root_cause_rows(causes: Sequence[Mapping]) -> list[dict]:
    """One row per first failing hop: tasks, share, cumulative share, time lost, by outcome."""
    return [{
        "hop kind": c.get("ffh_kind") or fmt.MISSING,
        "hop name": c.get("ffh_name") or fmt.MISSING,
        "reason": fmt.label(c.get("ffh_reason")),
        "tasks": fmt.count(c.get("tasks")),
        "share": fmt.pct(c.get("share")),
        "cumulative": fmt.pct(c.get("cumulative_share")),
        "time lost": fmt.duration((c.get("seconds_lost") or 0) * 1000.0),
        "failed": fmt.count(c.get("failed")),
        "degraded": fmt.count(c.get("degraded")),
        "budget exhausted": fmt.count(c.get("budget_exhausted")),
        "rejected": fmt.count(c.get("rejected")),
    } for c in causes]


def hop_rows(hops: Sequence[Mapping]) -> list[dict]:
    """One row per hop: calls, attempts per logical call, failure rates, latency, TTFT, tokens."""
    return [{
        "kind": h.get("hop_kind") or fmt.MISSING,
        "name": h.get("hop_name") or fmt.MISSING,
        "calls": fmt.count(h.get("calls")),
        "attempts/call": fmt.ratio(h.get("attempts_per_call")),
        "errors": fmt.pct(h.get("error_rate")),
        "timeouts": fmt.pct(h.get("timeout_rate")),
        "429": fmt.pct(h.get("rate_limited_rate")),
        "circuit open": fmt.pct(h.get("circuit_open_rate")),
        "p50": fmt.duration(h.get("latency_p50_ms")),
        "p95": fmt.duration(h.get("latency_p95_ms")),
        "p99": fmt.duration(h.get("latency_p99_ms")),
        "TTFT p50": fmt.duration(h.get("ttft_p50_ms")),
        "TTFT p95": fmt.duration(h.get("ttft_p95_ms")),
        "tokens in/out": f"{fmt.compact(h.get('input_tokens'))} / {fmt.compact(h.get('output_tokens'))}",
    } for h in hops]


def budget_rows(kinds: Sequence[Mapping]) -> list[dict]:
    """One row per hop kind: self time per task and its share of the duration and the budget."""
    return [{
        "hop kind": k.get("hop_kind"),
        "tasks with it": fmt.count(k.get("tasks_with_hop")),
        "avg per task": fmt.duration(k.get("avg_ms_per_task")),
        "share of duration": fmt.pct(k.get("share_of_duration")),
        "share of budget": fmt.pct(k.get("share_of_budget")),
        "total self time": fmt.duration(k.get("self_ms")),
    } for k in kinds]


def task_rows(tasks: Sequence[Mapping]) -> list[dict]:
    """One row per task: id, type, tenant, outcome, duration, budget use, first failing hop."""
    return [{
        "task id": t.get("task_id"),
        "type": t.get("task_type") or fmt.MISSING,
        "tenant": t.get("tenant_id") or fmt.MISSING,
        "outcome": fmt.label(t.get("outcome")),
        "ended": fmt.timestamp(t.get("end") or t.get("start")),
        "duration": fmt.duration(t.get("duration_ms")),
        "budget used": fmt.pct(t.get("budget_used_ratio")),
        "first failing hop": (fmt.hop(t.get("ffh_kind"), t.get("ffh_name"), t.get("ffh_reason"))
                              if t.get("ffh_kind") or t.get("ffh_name") else fmt.MISSING),
        "retries": fmt.count(t.get("retries")),
        "trace id": t.get("trace_id"),
    } for t in tasks]


#: Span columns shown in the attribute view before the raw attributes, in this order.
SPAN_FIELDS = ("name", "hop_kind", "hop_name", "span_id", "parent_span_id", "service_name",
               "start", "end", "duration_ms", "status_code", "status_message", "error_type",
               "http_status", "hop_timeout_ms", "budget_total_ms", "budget_remaining_ms",
               "budget_exhausted", "retry_attempt", "retry_max", "fallback_used",
               "fallback_kind", "fallback_from", "fallback_to", "circuit_state", "ttft_ms",
               "input_tokens", "output_tokens")


def span_summary(span: Mapping) -> dict:
    """The contract fields of one span that are set, in a fixed order."""
    return {k: span[k] for k in SPAN_FIELDS if span.get(k) not in (None, "", False)}


def finding_evidence(evidence: Mapping) -> list[dict]:
    """One row per evidence number: name in words and the value as given."""
    return [{"evidence": fmt.label(k), "value": _value(k, v)} for k, v in evidence.items()]


def _value(key: str, value) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return fmt.MISSING if value is None else str(value)
    if key.endswith("_ms"):
        return fmt.duration(value)
    if key.endswith(("_rate", "_share", "_ratio")):
        return fmt.pct(value)
    return fmt.count(value)
