-- snippet: evidence of findings/timeouts_exceeding_budget_left: the calls with a timeout that
-- ended in [lo_ns, hi_ns), one row each, with what their caller had left and whether their
-- worst case overshot it; parents, roots and tasks are read among those that started from
-- reach_ns (a task's spans start within 30 min of it). DuckDB's twin, which adds them up per
-- minute.
with timed_calls as (
    select trace_id, span_id, assumeNotNull(parent_span_id) as parent_span_id, task_id,
           hop_kind, hop_name, start_ns, end_ns, hop_timeout_ms, retry_max,
           coalesce(attempt, retry_attempt, 0) as nth,  -- retry_attempt: not materialized yet
           budget_remaining_ms
    from {{finding_spans}}
    where end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
      and hop_timeout_ms > 0
      and parent_span_id is not null
),
timed_tasks as (
    select task_id, trace_id, root_span_id, budget_total_ms, start_ns, outcome
    from {{finding_tasks}}
    where task_id in (select task_id from timed_calls)
      and start_ns >= {reach_ns:Int64} and start_ns < {hi_ns:Int64}
),
around as (
    -- the spans of those calls' traces and tasks' traces (their parents and roots)
    select trace_id, span_id, start_ns, hop_timeout_ms, hop_name, budget_remaining_ms
    from {{finding_spans}}
    where (trace_id in (select trace_id from timed_calls)
           or trace_id in (select trace_id from timed_tasks))
      and start_ns >= {reach_ns:Int64} and start_ns < {hi_ns:Int64}
),
placed as (
    select
        c.task_id as task_id, c.span_id as span_id, c.hop_kind as hop_kind,
        c.hop_name as hop_name, c.end_ns as end_ns, c.hop_timeout_ms as hop_timeout_ms,
        -- attempts this call may still make, itself included
        greatest(coalesce(c.retry_max, 0) + 1 - c.nth, 1) as attempts_left,
        coalesce(
            c.budget_remaining_ms,
            p.budget_remaining_ms - (c.start_ns - p.start_ns) / 1e6,
            t.budget_total_ms - (c.start_ns - t.start_ns) / 1e6
        ) as budget_left_ms,
        if(p.hop_timeout_ms > 0, p.hop_timeout_ms - (c.start_ns - p.start_ns) / 1e6, NULL)
            as parent_left_ms,
        if(r.hop_timeout_ms > 0, r.hop_timeout_ms - (c.start_ns - r.start_ns) / 1e6, NULL)
            as root_left_ms,
        p.hop_name as parent_name, r.hop_name as root_name,
        t.outcome in ('failed', 'budget_exhausted', 'lost') as task_bad
    from timed_calls as c
    left join around as p on p.trace_id = c.trace_id and p.span_id = c.parent_span_id
    left join timed_tasks as t on t.task_id = c.task_id
    left join around as r on r.trace_id = t.trace_id and r.span_id = t.root_span_id
),
judged as (
    select
        *,
        -- the least of the known limits (DuckDB's least() skips nulls)
        if(budget_left_ms is null and parent_left_ms is null and root_left_ms is null, NULL,
           arrayMin(arrayFilter(x -> x is not null,
                                [budget_left_ms, parent_left_ms, root_left_ms]))) as left_ms,
        hop_timeout_ms * attempts_left as worst_ms
    from placed
)
select
    task_id, span_id, hop_kind, hop_name, end_ns, hop_timeout_ms, attempts_left, left_ms,
    worst_ms,
    -- which limit was the tightest, for the hint
    multiIf(coalesce(left_ms = parent_left_ms, false), parent_name,
            coalesce(left_ms = root_left_ms, false), root_name, 'the task budget') as bound_by,
    coalesce(task_bad, false) as task_bad,
    coalesce(left_ms > 0 and worst_ms > left_ms, false) as inverted,
    (worst_ms - left_ms, task_id, span_id) as overshoot
from judged
settings join_use_nulls = 1
