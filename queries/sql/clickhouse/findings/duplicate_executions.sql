-- queries.findings.duplicate_side_effect.duplicate_executions: which hops executed one idempotency key successfully more than once?
-- (raw rows: a key's executions reach across tasks and up to duplicate_lookback_s before the
-- window; DuckDB takes its candidate keys from the stored key counts (findings/duplicate_keys)
-- and then the same steps, two of them merged here: the repeated and the recent keys, the
-- executions and their shared traces)
with keys as (
    -- only a key executed successfully more than once (innermost or not), once within the
    -- window, can be duplicated there: one pass over the keys of the window and the lookback
    -- before it (every span read here ended from there on: an execution's ancestors end after
    -- it), cheaper than matching every key of the window. Each CTE here is read as few times
    -- as it can be: ClickHouse analyses a CTE again at every reference (docs/scale-out.md)
    -- Over every stored version (a span judged again counts twice): a superset of the keys,
    -- whose executions are then read through finding_spans, FINAL
    select hop_kind, hop_name, idempotency_key
    from {{finding_span_rows}}
    where end_ns >= {start_ns:Int64} - toInt64({duplicate_lookback_s:Float64} * 1e9)
      and idempotency_key is not null and not is_error
    group by hop_kind, hop_name, idempotency_key
    having count() > 1
       and countIf(end_ns >= {start_ns:Int64} and end_ns < {end_ns:Int64}) > 0
),
executions as materialized (
    -- shared: the trace holds some hop's execution of this key twice, so one span of it may
    -- be inside another
    select *, max(per_hop) over (partition by trace_id, key) > 1 as shared
    from (select task_id, trace_id, span_id, parent_span_id, hop_kind, hop_name,
                 assumeNotNull(idempotency_key) as key, end_ns,
                 count() over (partition by trace_id, hop_kind, hop_name, key) as per_hop
          from {{finding_spans}}
          where end_ns >= {start_ns:Int64} - toInt64({duplicate_lookback_s:Float64} * 1e9)
            and idempotency_key is not null and not is_error
            and (hop_kind, hop_name, idempotency_key) in (select * from keys))
),
trees as materialized (
    -- the parent of each span of those traces, as parallel arrays per trace
    select trace_id, groupArray(span_id) as ids, groupArray(coalesce(parent_span_id, '')) as parents
    from {{finding_spans}}
    where end_ns >= {start_ns:Int64} - toInt64({duplicate_lookback_s:Float64} * 1e9)
      and trace_id in (select trace_id from executions where shared)
    group by trace_id
),
chain as materialized (
    -- the ancestors of those executions, walked up to 64 levels (a parent cycle ends there;
    -- DuckDB recurses, and ClickHouse materializes no CTE in a recursive WITH)
    select e.trace_id as trace_id, e.span_id as span_id, e.hop_kind as hop_kind,
           e.hop_name as hop_name, e.key as key,
           arrayFold((acc, i) -> if(acc.1 = '', acc,
                                    (t.parents[indexOf(t.ids, acc.1)], arrayPushBack(acc.2, acc.1))),
                     range(64), (coalesce(e.parent_span_id, ''), CAST([], 'Array(String)'))).2
               as ancestors
    from executions as e
    inner join trees as t on t.trace_id = e.trace_id
    where e.shared
),
carriers as (
    -- executions with an execution of the same hop and key below them
    select distinct a.trace_id as trace_id, a.span_id as span_id
    from (select trace_id, hop_kind, hop_name, key, ancestor_id
          from chain
          array join ancestors as ancestor_id) as c
    inner join executions as a on a.trace_id = c.trace_id and a.span_id = c.ancestor_id
    where a.key = c.key and a.hop_kind = c.hop_kind and a.hop_name = c.hop_name
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
settings enable_materialized_cte = 1
