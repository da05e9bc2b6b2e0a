-- queries.findings.missing_timeout.long_calls_without_timeout: which hops without a timeout had calls that ran long (or long for the hop)?
-- (the verdict over the window's evidence, _evidence_long_calls_without_timeout.sql, asked
-- inline: the hop's p50 from its calls' histogram, within 1.1 %, as DuckDB's)
with evidence_rows as materialized ({{evidence_long_calls_without_timeout}}),
suspects as (
    -- the hops with a call that may be long
    select hop_kind, hop_name, toInt64(sum(n['calls'])) as n_calls
    from evidence_rows
    group by hop_kind, hop_name
    having sum(n['candidates']) > 0
),
hist_hops as (select hop_kind, hop_name from suspects),
hist as ({{evidence_hist}}),
probs as (
    select 'duration' as p_metric, 'p50' as label, 0.5 as q
),
{{hist_quantiles}},
typical as (
    select s.hop_kind as hop_kind, s.hop_name as hop_name, s.n_calls as n_calls, q.value as p50
    from suspects as s
    inner join quantiles as q on q.grp = (s.hop_kind, s.hop_name)
),
long_calls as (
    select c.hop_kind as hop_kind, c.hop_name as hop_name, c.duration_ms as duration_ms,
           c.end_ns as end_ns, c.task_id as task_id, c.bad as bad, t.n_calls as n_calls,
           t.p50 as p50
    from (select hop_kind, hop_name, call.1 as duration_ms,
                 minute_ns + toInt64(call.2) as end_ns, call.3 as bad, call.4 as task_id
          from evidence_rows
          array join arrayZip(vals['long_ms'], vals['end_off_ns'], vals['bad'], task_ids) as call
          where n['candidates'] > 0) as c
    inner join typical as t on t.hop_kind = c.hop_kind and t.hop_name = c.hop_name
    where c.duration_ms > {missing_timeout_long_ms:Float64}
       or (c.duration_ms > {missing_timeout_p50_factor:Float64} * t.p50
           and c.duration_ms > {missing_timeout_floor_ms:Float64})
),
per_hop as (
    select
        hop_kind, hop_name,
        max(duration_ms) as longest,
        count() as n_long,
        any(n_calls) as all_calls,
        any(p50) as hop_p50,
        quantileExactInclusive(0.5)(duration_ms) as median_long,
        uniqExactIf(task_id, bad = 1) as n_bad,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from long_calls
    group by hop_kind, hop_name
),
examples as (
    -- each minute's five longest calls that may be long hold the window's five longest long ones
    select x.hop_kind as hop_kind, x.hop_name as hop_name,
           arrayMap(e -> CAST((e.2, e.3), 'Tuple(task_id String, span_id String)'),
                    arraySlice(arrayReverseSort(groupArray(x.ex)), 1, 5)) as top
    from (select hop_kind, hop_name, ex from evidence_rows array join examples as ex) as x
    inner join typical as t on t.hop_kind = x.hop_kind and t.hop_name = x.hop_name
    where x.ex.1 > {missing_timeout_long_ms:Float64}
       or (x.ex.1 > {missing_timeout_p50_factor:Float64} * t.p50
           and x.ex.1 > {missing_timeout_floor_ms:Float64})
    group by x.hop_kind, x.hop_name
)
select h.hop_kind as hop_kind, h.hop_name as hop_name, h.longest as max_ms,
       h.n_long as long_calls, h.all_calls as calls, h.hop_p50 as p50_ms,
       h.median_long as median_long_ms, h.n_bad as bad_tasks, e.top as examples,
       h.first_ns as first_ns, h.last_ns as last_ns
from per_hop as h
left join examples as e on e.hop_kind = h.hop_kind and e.hop_name = h.hop_name
order by max_ms desc
settings join_use_nulls = 1, enable_materialized_cte = 1
