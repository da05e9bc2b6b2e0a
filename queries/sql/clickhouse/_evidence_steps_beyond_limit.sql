-- snippet: evidence of findings/steps_beyond_limit for the agent runs over their loop limit
-- that ended in [lo_ns, hi_ns), per minute of that end and hop (their children: those that
-- started within span_slack_ns of the agent's end, whatever the range); DuckDB's twin
with agents as (
    select trace_id, span_id, task_id, hop_kind, hop_name, loop_limit, end_ns
    from {{finding_spans}}
    where end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
      and hop_kind = 'agent' and loop_limit > 0
),
children as (
    select c.trace_id as trace_id, assumeNotNull(c.parent_span_id) as parent_span_id,
           c.hop_kind as hop_kind, c.start_ns as start_ns
    from {{finding_spans}} as c
    where c.start_ns >= {reach_ns:Int64} and c.start_ns < {reach_end_ns:Int64}
      and coalesce(c.attempt, c.retry_attempt, 0) = 0  -- retry_attempt: not materialized yet
      and c.trace_id in (select trace_id from agents)
),
steps as (
    select a.trace_id as trace_id, a.span_id as span_id,
           countIf(c.hop_kind = 'model') as model_calls, count() as calls
    from agents as a
    inner join children as c on c.trace_id = a.trace_id and c.parent_span_id = a.span_id
    where c.start_ns >= a.end_ns - {span_slack_ns:Int64}
      and c.start_ns < a.end_ns + {span_slack_ns:Int64}
    group by a.trace_id, a.span_id
),
counted as (
    select a.task_id as task_id, a.span_id as span_id, a.hop_kind as hop_kind,
           a.hop_name as hop_name, a.loop_limit as loop_limit, a.end_ns as end_ns,
           if(s.model_calls > 0, s.model_calls, s.calls) as n_steps,
           (toFloat64(n_steps), a.task_id, a.span_id) as ex
    from agents as a
    inner join steps as s on s.trace_id = a.trace_id and s.span_id = a.span_id
)
select
    intDiv(end_ns, 60000000000) * 60000000000 as minute_ns,
    hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type,
    CAST(NULL, 'Nullable(String)') as label,
    CAST([], 'Array(String)') as task_ids,
    map('runs', toFloat64(count()), 'loop_limit', toFloat64(max(loop_limit)),
        'max_steps', toFloat64(max(n_steps))) as n,
    map('steps', groupArray(toFloat64(n_steps))) as vals,
    {{evidence_top5}} as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from counted
where n_steps > loop_limit
group by minute_ns, hop_kind, hop_name
