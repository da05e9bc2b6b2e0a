"""Per-hop health: calls, attempts per logical call, error/timeout/429/circuit rates, latency, tokens.

A span belongs to the window holding its end (`end_ns`), like a task: a call is counted when it
completes, with its latency and outcome known.

Attempts and logical calls: materialization gives every span its logical call (`call_id`) by
the one definition in docs/tasks.md (Attempts), numbered or not: a call retried twice makes one
logical call of three attempts, an agent loop calling the same model five times makes five.
Spans not materialized yet (`call_id` null: stored before migration 2, or by another tool) fall
back to their declared numbers: a sibling group holds as many such calls as it has first
attempts (`retry_attempt` null or 0), and at least one.

Logical calls are counted at their first attempt (the span whose id is the `call_id`), so a
call whose attempts straddle a window's start counts in the window holding its first attempt.
Latency and time-to-first-token quantiles come from exponential histograms: within 1.1 % of
linear interpolation (docs/rollups.md). Whole minutes are read from the hop rollups, the edges
from `spans`; a task filter (which the hop rollups have no key for) or `raw=True` reads `spans`
only.

The series (`hop_series`) buckets the same spans by their end, buckets starting at the window
start every `step_ns` as in queries.sla, and keeps only the busiest hops of the window.
"""

from __future__ import annotations

from agentsla.queries._sql import task_filters
from agentsla.queries.rollup import split, split_series
from agentsla.queries.store import ReadStore
from agentsla.queries.window import rfc3339


def _task_filter(filters: dict) -> dict[str, str]:
    """Drop the task filter (a semi-join over every span's task) when it filters nothing."""
    return {"hop_task_filter": ""} if _unfiltered(filters) else {}


def _unfiltered(filters: dict) -> bool:
    return all(v is None for v in filters.values())


def hop_stats(store: ReadStore, start_ns: int, end_ns: int, hop_kind: str | None = None,
              task_type: str | None = None, tenant_id: str | None = None,
              service_name: str | None = None, limit: int = 500,
              raw: bool = False) -> list[dict]:
    """Answer: how is each hop (kind, name) doing over the spans that ended in the window?

    Rows, most errors first: hop_kind, hop_name, calls (spans), logical_calls,
    attempts_per_call, errors, error_rate, timeouts, timeout_rate, rate_limited,
    rate_limited_rate, circuit_open, circuit_open_rate (all per call), latency_p50_ms,
    latency_p95_ms, latency_p99_ms, ttft_p50_ms, ttft_p95_ms (null without time to first
    token), input_tokens, output_tokens. `task_type`/`tenant_id`/`service_name` filter through
    the task.
    """
    filters = task_filters(task_type, tenant_id, service_name)
    bounds = split(start_ns, end_ns, raw or not _unfiltered(filters))
    return store.rows("hop_stats", {**bounds, "hop_kind": hop_kind, "limit": limit, **filters},
                      hist_keys="hop_keys", **_task_filter(filters))


def hop_series(store: ReadStore, start_ns: int, end_ns: int, step_ns: int,
               hop_kind: str | None = None, task_type: str | None = None,
               tenant_id: str | None = None, service_name: str | None = None,
               limit: int = 20, raw: bool = False) -> list[dict]:
    """Answer: how did the busiest hops do over time, bucket by bucket of `step_ns`?

    Rows, oldest bucket first, then busiest hop first: bucket_ns (bucket start), bucket
    (RFC 3339), hop_kind, hop_name, calls, error_rate, timeout_rate, rate_limited_rate (per
    call), latency_p95_ms. Only the `limit` hops with the most calls in the whole window;
    buckets where a hop had no call have no row. Filters as in hop_stats.
    """
    filters = task_filters(task_type, tenant_id, service_name)
    bounds = split_series(start_ns, end_ns, step_ns, raw or not _unfiltered(filters))
    rows = store.rows("hop_series", {
        **bounds, "step_ns": step_ns, "hop_kind": hop_kind, "limit": limit, **filters},
        hist_keys="hop_bucket_keys", **_task_filter(filters))
    return [{"bucket_ns": r["bucket_ns"], "bucket": rfc3339(r["bucket_ns"]), **r} for r in rows]
