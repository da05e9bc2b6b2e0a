"""Per-hop health: calls, attempts per logical call, error/timeout/429/circuit rates, latency, tokens.

A span belongs to the window holding its end (`end_ns`), like a task: a call is counted when it
completes, with its latency and outcome known.

Attempts and logical calls: materialization gives every span its logical call (`call_id`) by
the one definition in docs/tasks.md (Attempts), numbered or not: a call retried twice makes one
logical call of three attempts, an agent loop calling the same model five times makes five.
Spans not materialized yet (`call_id` null: stored before migration 2, or by another tool) fall
back to their declared numbers: a sibling group holds as many such calls as it has first
attempts (`retry_attempt` null or 0), and at least one.

The series (`hop_series`) buckets the same spans by their end, buckets starting at the window
start every `step_ns` as in queries.sla, and keeps only the busiest hops of the window.
"""

from __future__ import annotations

from agentsla.queries._sql import TASK_FILTER_NAMES, TASK_FILTERS, fetch_dicts
from agentsla.queries.window import rfc3339

_WINDOW_SPANS = """
window_spans as (
    -- a span belongs to the window holding its end
    select s.*
    from spans s
    where s.end_ns >= $start_ns and s.end_ns < $end_ns
      and ($hop_kind is null or s.hop_kind = $hop_kind){task_filter}
)"""

#: Only with a task filter: DuckDB does not drop `(null is null or x in (...))` for bound nulls,
#: and the semi-join probe costs a pass over every span's task_id. The filter's unqualified
#: columns resolve to `tasks` (the innermost scope), not to the span.
_TASK_FILTER = """
      and s.task_id in (select task_id from tasks where true{filters})""".format(
    filters=TASK_FILTERS)

_HOPS_SQL = """
with {window_spans},
sibling_calls as (
    -- one row per (trace, parent, hop): its attempts and how many logical calls they make
    select
        hop_kind, hop_name,
        count(distinct call_id)
        + case when count(*) filter (where call_id is null) > 0
               then greatest(count(*) filter (
                        where call_id is null and coalesce(retry_attempt, 0) = 0), 1)
               else 0 end as logical_calls
    from window_spans
    group by trace_id, coalesce(parent_span_id, span_id), hop_kind, hop_name
),
logical as (
    select hop_kind, hop_name, sum(logical_calls) as logical_calls
    from sibling_calls
    group by hop_kind, hop_name
),
per_hop as (
    select
        hop_kind, hop_name,
        count(*) as calls,
        count(*) filter (where is_error) as errors,
        count(*) filter (where error_type = 'timeout') as timeouts,
        count(*) filter (where error_type = 'rate_limited') as rate_limited,
        count(*) filter (where error_type = 'circuit_open') as circuit_open,
        quantile_cont(duration_ms, [0.5, 0.95, 0.99]) as latency,
        quantile_cont(ttft_ms, [0.5, 0.95]) as ttft,  -- null for hops without streaming
        coalesce(sum(input_tokens), 0) as input_tokens,
        coalesce(sum(output_tokens), 0) as output_tokens
    from window_spans
    group by hop_kind, hop_name
)
select
    p.hop_kind, p.hop_name, p.calls, l.logical_calls,
    p.calls / l.logical_calls as attempts_per_call,
    p.errors, p.errors / p.calls as error_rate,
    p.timeouts, p.timeouts / p.calls as timeout_rate,
    p.rate_limited, p.rate_limited / p.calls as rate_limited_rate,
    p.circuit_open, p.circuit_open / p.calls as circuit_open_rate,
    p.latency[1] as latency_p50_ms, p.latency[2] as latency_p95_ms, p.latency[3] as latency_p99_ms,
    p.ttft[1] as ttft_p50_ms, p.ttft[2] as ttft_p95_ms,
    p.input_tokens, p.output_tokens
from per_hop p
join logical l on l.hop_kind is not distinct from p.hop_kind
              and l.hop_name is not distinct from p.hop_name
order by p.errors desc, p.calls desc, p.hop_kind, p.hop_name
limit $limit
"""

_SERIES_SQL = """
with {window_spans},
per_bucket as (
    -- one grouped pass: a span falls in the bucket holding its end
    select
        $start_ns + (end_ns - $start_ns) // $step_ns * $step_ns as bucket_ns,
        hop_kind, hop_name,
        count(*) as calls,
        count(*) filter (where is_error) as errors,
        count(*) filter (where error_type = 'timeout') as timeouts,
        count(*) filter (where error_type = 'rate_limited') as rate_limited,
        quantile_cont(duration_ms, 0.95) as latency_p95_ms
    from window_spans
    group by bucket_ns, hop_kind, hop_name
),
ranked as (
    -- hops ranked by their calls over the whole window (ties: kind, name)
    select *, dense_rank() over (order by hop_calls desc, hop_kind, hop_name) as hop_rank
    from (select *, sum(calls) over (partition by hop_kind, hop_name) as hop_calls
          from per_bucket)
)
select bucket_ns, hop_kind, hop_name, calls,
    errors / calls as error_rate,
    timeouts / calls as timeout_rate,
    rate_limited / calls as rate_limited_rate,
    latency_p95_ms
from ranked
where hop_rank <= $limit
order by bucket_ns, hop_rank
"""


def _spans_cte(filters: dict) -> tuple[str, dict]:
    """The window_spans CTE and its task-filter parameters (none without a task filter)."""
    if all(value is None for value in filters.values()):
        return _WINDOW_SPANS.format(task_filter=""), {}
    return _WINDOW_SPANS.format(task_filter=_TASK_FILTER), filters


def hop_stats(cur, start_ns: int, end_ns: int, hop_kind: str | None = None,
              task_type: str | None = None, tenant_id: str | None = None,
              service_name: str | None = None, limit: int = 500) -> list[dict]:
    """Answer: how is each hop (kind, name) doing over the spans that ended in the window?

    Rows, most errors first: hop_kind, hop_name, calls (spans), logical_calls,
    attempts_per_call, errors, error_rate, timeouts, timeout_rate, rate_limited,
    rate_limited_rate, circuit_open, circuit_open_rate (all per call), latency_p50_ms,
    latency_p95_ms, latency_p99_ms, ttft_p50_ms, ttft_p95_ms (null without time to first
    token), input_tokens, output_tokens. `task_type`/`tenant_id`/`service_name` filter through
    the task.
    """
    cte, bound = _spans_cte(dict(zip(TASK_FILTER_NAMES, (task_type, tenant_id, service_name))))
    return fetch_dicts(cur, _HOPS_SQL.format(window_spans=cte), {
        "start_ns": start_ns, "end_ns": end_ns, "hop_kind": hop_kind, "limit": limit, **bound})


def hop_series(cur, start_ns: int, end_ns: int, step_ns: int, hop_kind: str | None = None,
               task_type: str | None = None, tenant_id: str | None = None,
               service_name: str | None = None, limit: int = 20) -> list[dict]:
    """Answer: how did the busiest hops do over time, bucket by bucket of `step_ns`?

    Rows, oldest bucket first, then busiest hop first: bucket_ns (bucket start), bucket
    (RFC 3339), hop_kind, hop_name, calls, error_rate, timeout_rate, rate_limited_rate (per
    call), latency_p95_ms. Only the `limit` hops with the most calls in the whole window;
    buckets where a hop had no call have no row. Filters as in hop_stats.
    """
    cte, bound = _spans_cte(dict(zip(TASK_FILTER_NAMES, (task_type, tenant_id, service_name))))
    rows = fetch_dicts(cur, _SERIES_SQL.format(window_spans=cte), {
        "start_ns": start_ns, "end_ns": end_ns, "step_ns": step_ns, "hop_kind": hop_kind,
        "limit": limit, **bound})
    return [{"bucket_ns": r["bucket_ns"], "bucket": rfc3339(r["bucket_ns"]), **r} for r in rows]
