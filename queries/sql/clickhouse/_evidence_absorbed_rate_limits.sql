-- snippet: evidence of findings/absorbed_rate_limits: the logical calls whose last attempt
-- ended in [lo_ns, hi_ns), one row each (attempts read from [start_ns, end_ns), the range
-- widened by the calls' slack; their tasks among those that started from reach_ns): its 429s,
-- whether its last attempt succeeded, its latency, and for a masked call whether its task went
-- well (DuckDB's twin keeps them per minute, the clean calls as a histogram)
with {{attempts}},
calls as (
    select
        task_id, hop_kind, hop_name,
        countIf(error_type = 'rate_limited') as rate_limited,
        not argMax(is_error, attempt) as succeeded,
        (max(end_ns) - min(start_ns)) / 1e6 as latency_ms,
        argMax(span_id, attempt) as last_span_id,
        max(end_ns) as call_end_ns
    from attempts
    group by trace_id, parent_span_id, hop_kind, hop_name, call_id, task_id
)
select c.task_id as task_id, c.hop_kind as hop_kind, c.hop_name as hop_name,
       c.rate_limited as rate_limited, c.latency_ms as latency_ms,
       c.last_span_id as span_id, c.call_end_ns as end_ns,
       c.rate_limited > 0 and c.succeeded as masked,
       masked and coalesce(k.outcome in ('success', 'degraded'), false) as task_ok
from calls as c
left join (select task_id, outcome from {{finding_tasks}}
           where start_ns >= {reach_ns:Int64} and start_ns < {hi_ns:Int64}) as k
       on k.task_id = c.task_id
where c.call_end_ns >= {lo_ns:Int64} and c.call_end_ns < {hi_ns:Int64}
settings join_use_nulls = 1
