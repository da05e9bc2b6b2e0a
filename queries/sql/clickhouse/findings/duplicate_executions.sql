-- queries.findings.duplicate_side_effect.duplicate_executions: which hops executed one idempotency key successfully more than once?
-- (raw rows on both engines: a key's executions reach across tasks and all of time; DuckDB's
-- twin, step for step)
with recursive repeated_keys as (
    -- only a key executed successfully more than once (innermost or not) can be duplicated:
    -- one pass over the keys of all times, cheaper than matching every key of the window
    select hop_kind, hop_name, idempotency_key
    from spans
    where idempotency_key is not null and not is_error
    group by hop_kind, hop_name, idempotency_key
    having count() > 1
),
recent_keys as (
    select distinct hop_kind, hop_name, idempotency_key
    from spans
    where end_ns >= {start_ns:Int64} and end_ns < {end_ns:Int64}
      and idempotency_key is not null and not is_error
      and (hop_kind, hop_name, idempotency_key) in (select * from repeated_keys)
),
executions as (
    select task_id, trace_id, span_id, parent_span_id, hop_kind, hop_name,
           assumeNotNull(idempotency_key) as key, end_ns
    from spans
    where idempotency_key is not null and not is_error
      and (hop_kind, hop_name, idempotency_key) in (select * from recent_keys)
),
shared_traces as (
    -- only a trace holding a key twice can hold one span of it inside another
    select trace_id, key
    from executions
    group by trace_id, hop_kind, hop_name, key
    having count() > 1
),
trace_spans as (
    -- the spans of those traces (the recursion below joins them at every step)
    select trace_id, span_id, assumeNotNull(parent_span_id) as parent_id
    from spans
    where trace_id in (select trace_id from shared_traces) and parent_span_id is not null
),
chain as (
    -- the ancestors of those executions (a parent cycle ends at depth 64: ClickHouse's
    -- recursion keeps repeats, DuckDB's `union` drops them)
    select trace_id, span_id, assumeNotNull(parent_span_id) as ancestor_id, 1 as depth
    from executions
    where parent_span_id is not null
      and (trace_id, key) in (select trace_id, key from shared_traces)
    union all
    select c.trace_id, c.span_id, p.parent_id, c.depth + 1
    from chain as c
    inner join trace_spans as p on p.trace_id = c.trace_id and p.span_id = c.ancestor_id
    where c.depth < 64
),
carriers as (
    -- executions with an execution of the same hop and key below them
    select distinct a.trace_id as trace_id, a.span_id as span_id
    from chain as c
    inner join executions as e on e.trace_id = c.trace_id and e.span_id = c.span_id
    inner join executions as a on a.trace_id = c.trace_id and a.span_id = c.ancestor_id
    where a.key = e.key and a.hop_kind = e.hop_kind and a.hop_name = e.hop_name
),
innermost as (
    select *
    from executions
    where (trace_id, span_id) not in (select trace_id, span_id from carriers)
),
duplicated as (
    select
        hop_kind, hop_name, key,
        count() as n_executions,
        uniqExact(task_id) as n_tasks,
        arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
                 arraySort(groupArray((end_ns, task_id, span_id)))) as runs,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from innermost
    group by hop_kind, hop_name, key
    having n_executions > 1
)
select
    hop_kind, hop_name,
    count() as duplicated_keys,
    sum(n_executions - 1) as extra_executions,
    max(n_executions) as max_executions,
    countIf(n_tasks > 1) as keys_across_tasks,
    -- the runs of the most executed keys first (DuckDB leaves the order of equals open;
    -- here the greater key goes first)
    arraySlice(arrayFlatten(arrayMap(x -> x.3, arrayReverseSort(
        groupArray((n_executions, key, runs))))), 1, 5) as examples,
    min(first_ns) as first_ns,
    max(last_ns) as last_ns
from duplicated
group by hop_kind, hop_name
order by extra_executions desc
