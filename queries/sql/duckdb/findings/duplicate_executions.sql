-- queries.findings.duplicate_side_effect.duplicate_executions: which hops executed one idempotency key successfully more than once?
with recursive repeated_keys as (
    -- the candidate keys (findings/duplicate_keys): only a key executed successfully more than
    -- once (innermost or not) from the lookback on, once within the window, can be duplicated
    -- there. Every span read below ended from the lookback on (an execution's ancestors end
    -- after it)
    select unnest($key_hashes::UBIGINT[]) as key_hash
),
recent_keys as (
    select distinct s.hop_kind, s.hop_name, s.idempotency_key
    from spans s
    where s.end_ns >= $start_ns and s.end_ns < $end_ns
      and s.idempotency_key is not null and not coalesce(s.is_error, false)
      and hash(s.idempotency_key) in (select key_hash from repeated_keys)
),
executions as materialized (
    select s.task_id, s.trace_id, s.span_id, s.parent_span_id, s.hop_kind, s.hop_name,
           s.idempotency_key, s.end_ns
    from spans s
    semi join recent_keys k on k.idempotency_key = s.idempotency_key
                           and k.hop_kind is not distinct from s.hop_kind
                           and k.hop_name is not distinct from s.hop_name
    where s.end_ns >= $start_ns - cast($duplicate_lookback_s * 1e9 as BIGINT)
      and not coalesce(s.is_error, false)
),
shared_traces as (
    -- only a trace holding a key twice can hold one span of it inside another
    select trace_id, hop_kind, hop_name, idempotency_key
    from executions
    group by all
    having count(*) > 1
),
trace_spans as materialized (
    -- the spans of those traces, read once (the recursion below joins them at every step)
    select s.trace_id, s.span_id, s.parent_span_id
    from spans s
    semi join shared_traces t on t.trace_id = s.trace_id
    where s.end_ns >= $start_ns - cast($duplicate_lookback_s * 1e9 as BIGINT)
),
chain(trace_id, span_id, ancestor_id) as (
    -- the ancestors of those executions; `union` drops repeats, so a parent cycle ends
    select e.trace_id, e.span_id, e.parent_span_id
    from executions e
    semi join shared_traces t on t.trace_id = e.trace_id and t.idempotency_key = e.idempotency_key
    where e.parent_span_id is not null
    union
    select c.trace_id, c.span_id, p.parent_span_id
    from chain c
    join trace_spans p on p.trace_id = c.trace_id and p.span_id = c.ancestor_id
    where p.parent_span_id is not null
),
carriers as (
    -- executions with an execution of the same hop and key below them
    select distinct a.trace_id, a.span_id
    from chain c
    join executions e on e.trace_id = c.trace_id and e.span_id = c.span_id
    join executions a on a.trace_id = c.trace_id and a.span_id = c.ancestor_id
    where a.idempotency_key = e.idempotency_key
      and a.hop_kind is not distinct from e.hop_kind
      and a.hop_name is not distinct from e.hop_name
),
innermost as (
    select * from executions
    anti join carriers c on c.trace_id = executions.trace_id and c.span_id = executions.span_id
),
duplicated as (
    select
        hop_kind, hop_name, idempotency_key,
        count(*) as executions,
        count(distinct task_id) as tasks,
        list({'task_id': task_id, 'span_id': span_id} order by end_ns) as runs,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from innermost
    group by hop_kind, hop_name, idempotency_key
    having count(*) > 1
)
select
    hop_kind, hop_name,
    count(*) as duplicated_keys,
    sum(executions - 1) as extra_executions,
    max(executions) as max_executions,
    count(*) filter (where tasks > 1) as keys_across_tasks,
    flatten(list(runs order by executions desc))[1:5] as examples,
    min(first_ns) as first_ns,
    max(last_ns) as last_ns
from duplicated
group by hop_kind, hop_name
order by extra_executions desc
