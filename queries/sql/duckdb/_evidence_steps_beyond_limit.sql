-- snippet: evidence of findings/steps_beyond_limit for the agent runs over their loop limit
-- that ended in [$lo_ns, $hi_ns), per minute of that end and hop (their children: those that
-- started within $span_slack_ns of the agent's end, whatever the range)
with agents as (
    select trace_id, span_id, task_id, hop_kind, hop_name, loop_limit, end_ns
    from spans
    where end_ns >= $lo_ns and end_ns < $hi_ns
      and hop_kind = 'agent' and loop_limit > 0
),
steps as (
    select
        c.trace_id, c.parent_span_id,
        count(*) filter (where c.hop_kind = 'model') as model_calls,
        count(*) as calls
    from spans c
    semi join agents a on a.trace_id = c.trace_id and a.span_id = c.parent_span_id
                      and c.start_ns >= a.end_ns - $span_slack_ns
                      and c.start_ns < a.end_ns + $span_slack_ns
    where c.start_ns >= $reach_ns and c.start_ns < $reach_end_ns
      and coalesce(c.attempt, c.retry_attempt, 0) = 0  -- retry_attempt: not materialized yet
    group by c.trace_id, c.parent_span_id
),
counted as (
    select a.*, case when s.model_calls > 0 then s.model_calls else s.calls end as steps
    from agents a
    join steps s on s.trace_id = a.trace_id and s.parent_span_id = a.span_id
)
select
    end_ns // $grain_ns * $grain_ns as minute_ns,
    hop_kind, hop_name,
    map {'runs': count(*), 'loop_limit': max(loop_limit),
         'max_steps': max(steps)}::MAP(VARCHAR, DOUBLE) as n,
    map {'steps': list(steps)}::MAP(VARCHAR, DOUBLE[]) as vals,
    arg_max({'task_id': task_id, 'span_id': span_id, 'rank': steps},
            {'r': steps, 't': task_id, 's': span_id}, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from counted
where steps > loop_limit
group by all
