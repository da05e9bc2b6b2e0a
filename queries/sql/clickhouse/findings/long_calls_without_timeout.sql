-- queries.findings.missing_timeout.long_calls_without_timeout: which hops without a timeout had calls that ran long (or long for the hop)?
-- (the verdict over the window's calls, _evidence_long_calls_without_timeout.sql, asked inline)
with untimed as materialized ({{evidence_long_calls_without_timeout}}),
suspects as (
    -- the hops with a call that may be long
    select hop_kind, hop_name, count() as n_calls
    from untimed
    group by hop_kind, hop_name
    having countIf(candidate) > 0
),
hist as (
    -- the durations of all their calls, for their p50 (within 1.1 %, as DuckDB's stored
    -- evidence keeps it)
    select (hop_kind, hop_name) as grp, 'duration_ms' as metric, {{hist_bucket}} as bucket,
           count() as count
    from (select hop_kind, hop_name, greatest(duration_ms, 0) as value from untimed
          where (hop_kind, hop_name) in (select hop_kind, hop_name from suspects))
    group by grp, metric, bucket
),
probs as (
    select 'duration_ms' as p_metric, 'p50' as label, 0.5 as q
),
{{hist_quantiles}},
typical as (
    select s.hop_kind as hop_kind, s.hop_name as hop_name, s.n_calls as n_calls, q.value as p50
    from suspects as s
    inner join quantiles as q on q.grp = (s.hop_kind, s.hop_name)
),
long_calls as (
    select c.*, t.n_calls as n_calls, t.p50 as p50, (c.duration_ms, c.task_id, c.span_id) as ex
    from untimed as c
    inner join typical as t on t.hop_kind = c.hop_kind and t.hop_name = c.hop_name
    where c.candidate
      and (c.duration_ms > {missing_timeout_long_ms:Float64}
           or (c.duration_ms > {missing_timeout_p50_factor:Float64} * t.p50
               and c.duration_ms > {missing_timeout_floor_ms:Float64}))
),
per_hop as (
    select
        hop_kind, hop_name,
        max(duration_ms) as longest,
        count() as n_long,
        any(n_calls) as all_calls,
        any(p50) as hop_p50,
        quantileExactInclusive(0.5)(duration_ms) as median_long,
        uniqExactIf(task_id, task_bad) as n_bad,
        arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
                 {{evidence_top5}}) as top,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from long_calls
    group by hop_kind, hop_name
)
select hop_kind, hop_name, longest as max_ms, n_long as long_calls, all_calls as calls,
       hop_p50 as p50_ms, median_long as median_long_ms, n_bad as bad_tasks, top as examples,
       first_ns, last_ns
from per_hop
order by max_ms desc
settings enable_materialized_cte = 1
