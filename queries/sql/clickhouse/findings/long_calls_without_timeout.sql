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
per_hop as (
    -- the hop's long calls, and its five longest long ones among each minute's five longest
    -- candidates (which hold the window's five longest): one read of the evidence and of
    -- `typical`, calls and examples as one array (ClickHouse analyses a CTE again at each
    -- reference)
    select
        c.hop_kind as hop_kind, c.hop_name as hop_name,
        maxIf(c.duration_ms, c.is_call) as longest,
        countIf(c.is_call) as n_long,
        any(t.n_calls) as all_calls,
        any(t.p50) as hop_p50,
        quantileExactInclusiveIf(0.5)(c.duration_ms, c.is_call) as median_long,
        uniqExactIf(c.task_id, c.is_call and c.bad = 1) as n_bad,
        minIf(c.end_ns, c.is_call) as first_ns,
        maxIf(c.end_ns, c.is_call) as last_ns,
        arrayMap(e -> CAST((e.2, e.3), 'Tuple(task_id String, span_id String)'),
                 arraySlice(arrayReverseSort(groupArrayIf(c.ex, not c.is_call)), 1, 5)) as top
    from (select hop_kind, hop_name, item.1 as is_call, item.2 as duration_ms,
                 item.3 as end_ns, item.4 as bad, item.5 as task_id, item.6 as ex
          from evidence_rows
          array join arrayConcat(
              arrayMap(call -> (true, call.1, minute_ns + toInt64(call.2), call.3, call.4,
                                (call.1, '', '')),
                       if(n['candidates'] > 0,
                          arrayZip(vals['long_ms'], vals['end_off_ns'], vals['bad'], task_ids),
                          [])),
              arrayMap(e -> (false, e.1, 0, 0.0, '', e), examples)) as item) as c
    inner join typical as t on t.hop_kind = c.hop_kind and t.hop_name = c.hop_name
    where c.duration_ms > {missing_timeout_long_ms:Float64}
       or (c.duration_ms > {missing_timeout_p50_factor:Float64} * t.p50
           and c.duration_ms > {missing_timeout_floor_ms:Float64})
    group by c.hop_kind, c.hop_name
    having n_long > 0
)
select h.hop_kind as hop_kind, h.hop_name as hop_name, h.longest as max_ms,
       h.n_long as long_calls, h.all_calls as calls, h.hop_p50 as p50_ms,
       h.median_long as median_long_ms, h.n_bad as bad_tasks, h.top as examples,
       h.first_ns as first_ns, h.last_ns as last_ns
from per_hop as h
order by max_ms desc
settings join_use_nulls = 1, enable_materialized_cte = 1
