-- snippet: evidence of findings/long_calls_without_timeout: the calls without a timeout
-- (hop_timeout_ms = 0) that ended in [lo_ns, hi_ns), one row each; a call that may be long
-- (over the lesser of missing_timeout_long_ms and _floor_ms) says whether its task went bad
-- (tasks read among those that started from reach_ns). DuckDB keeps them per minute in lists
-- for its stored evidence; nothing is stored here, so they stay rows.
with untimed as (
    select task_id, span_id, hop_kind, hop_name, duration_ms, end_ns,
           duration_ms > least({missing_timeout_long_ms:Float64},
                               {missing_timeout_floor_ms:Float64}) as candidate
    from {{finding_spans}}
    where end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
      and hop_timeout_ms = 0
)
select u.task_id as task_id, u.span_id as span_id, u.hop_kind as hop_kind,
       u.hop_name as hop_name, u.duration_ms as duration_ms, u.end_ns as end_ns,
       u.candidate as candidate,
       u.candidate and coalesce(k.outcome in ('failed', 'budget_exhausted', 'lost'), false)
           as task_bad
from untimed as u
left join (select task_id, outcome from {{finding_tasks}}
           where start_ns >= {reach_ns:Int64} and start_ns < {hi_ns:Int64}) as k
       on k.task_id = u.task_id
settings join_use_nulls = 1
