-- queries.findings.runaway_loop.steps_beyond_limit: which agents took more steps than their loop limit allows?
with agents as (
    select trace_id, span_id, task_id, hop_kind, hop_name, loop_limit, end_ns
    from spans
    where end_ns >= $start_ns and end_ns < $end_ns
      and hop_kind = 'agent' and loop_limit > 0
),
steps as (
    select
        c.trace_id, c.parent_span_id,
        count(*) filter (where c.hop_kind = 'model') as model_calls,
        count(*) as calls
    from spans c
    semi join agents a on a.trace_id = c.trace_id and a.span_id = c.parent_span_id
    where coalesce(c.attempt, c.retry_attempt, 0) = 0  -- retry_attempt: not materialized yet
    group by c.trace_id, c.parent_span_id
),
counted as (
    select a.*, case when s.model_calls > 0 then s.model_calls else s.calls end as steps
    from agents a
    join steps s on s.trace_id = a.trace_id and s.parent_span_id = a.span_id
)
select
    hop_kind, hop_name,
    count(*) as runs_over_limit,
    max(loop_limit) as loop_limit,
    median(steps) as median_steps,
    max(steps) as max_steps,
    arg_max({'task_id': task_id, 'span_id': span_id}, steps, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from counted
where steps > loop_limit
group by hop_kind, hop_name
order by runs_over_limit desc
