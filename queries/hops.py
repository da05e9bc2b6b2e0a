"""Per-hop health: calls, attempts per logical call, error/timeout/429/circuit rates, latency, tokens.

A span belongs to the window holding its end (`end_ns`), like a task: a call is counted when it
completes, with its latency and outcome known.

Attempts and logical calls: sibling spans of one hop (same trace, parent, hop kind and name)
numbered by `retry.attempt` are attempts of one logical call. A sibling group holds as many
logical calls as it has first attempts (`retry_attempt` null or 0), and at least one: an agent
loop calling the same model five times makes five logical calls, a call retried twice makes one
logical call of three attempts.
"""

from __future__ import annotations

from agentsla.queries._sql import fetch_dicts

_HOPS_SQL = """
with window_spans as (
    -- a span belongs to the window holding its end
    select s.*
    from spans s
    where s.end_ns >= $start_ns and s.end_ns < $end_ns
      and ($hop_kind is null or s.hop_kind = $hop_kind){task_filter}
),
sibling_calls as (
    -- one row per (trace, parent, hop): its attempts and how many logical calls they make
    select
        hop_kind, hop_name,
        count(*) as attempts,
        greatest(count(*) filter (where coalesce(retry_attempt, 0) = 0), 1) as logical_calls
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

#: Only with a task_type/tenant_id filter: DuckDB does not drop `(null is null or x in (...))`
#: for bound nulls, and the semi-join probe costs a pass over every span's task_id.
_TASK_FILTER = """
      and s.task_id in (
          select t.task_id from tasks t
          where ($task_type is null or t.task_type = $task_type)
            and ($tenant_id is null or t.tenant_id = $tenant_id))"""


def hop_stats(cur, start_ns: int, end_ns: int, hop_kind: str | None = None,
              task_type: str | None = None, tenant_id: str | None = None,
              limit: int = 500) -> list[dict]:
    """Answer: how is each hop (kind, name) doing over the spans that ended in the window?

    Rows, most errors first: hop_kind, hop_name, calls (spans), logical_calls,
    attempts_per_call, errors, error_rate, timeouts, timeout_rate, rate_limited,
    rate_limited_rate, circuit_open, circuit_open_rate (all per call), latency_p50_ms,
    latency_p95_ms, latency_p99_ms, ttft_p50_ms, ttft_p95_ms (null without time to first
    token), input_tokens, output_tokens. `task_type`/`tenant_id` filter through the task.
    """
    params = {"start_ns": start_ns, "end_ns": end_ns, "hop_kind": hop_kind, "limit": limit}
    if task_type is None and tenant_id is None:
        return fetch_dicts(cur, _HOPS_SQL.format(task_filter=""), params)
    return fetch_dicts(cur, _HOPS_SQL.format(task_filter=_TASK_FILTER),
                       {**params, "task_type": task_type, "tenant_id": tenant_id})
