-- queries.findings.rate_limit_masking.absorbed_rate_limits: which hops had 429s that retries absorbed, and what did it cost in latency?
-- (the verdict over the window's logical calls, _evidence_absorbed_rate_limits.sql, asked
-- inline: the masked and the clean calls' p99s from the exponential histograms DuckDB's stored
-- evidence keeps, within 1.1 %, so both engines give the same numbers)
with judged as materialized ({{evidence_absorbed_rate_limits}}),
masking as (
    select
        hop_kind, hop_name,
        count() as n_calls,
        countIf(masked) as n_masked,
        toInt64(sumIf(rate_limited, masked)) as n_absorbed,
        countIf(masked and task_ok) as n_task_ok,
        arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
                 arraySlice(arrayReverseSort(groupArrayIf(
                     (latency_ms, task_id, span_id), masked)), 1, 5)) as top,
        minIfOrNull(end_ns, masked) as first_ns,
        maxIfOrNull(end_ns, masked) as last_ns
    from judged
    group by hop_kind, hop_name
    having n_absorbed >= {rate_limit_min_absorbed:Float64}
       and n_masked >= {rate_limit_min_share:Float64} * n_calls
),
hist as (
    -- the latency histograms of those hops' masked and clean calls, for their p99s
    select (hop_kind, hop_name) as grp, if(masked, 'masked', 'clean') as metric,
           {{hist_bucket}} as bucket, count() as count
    from (select hop_kind, hop_name, masked, greatest(latency_ms, 0) as value from judged
          where (masked or rate_limited = 0)
            and (hop_kind, hop_name) in (select hop_kind, hop_name from masking))
    group by grp, metric, bucket
),
probs as (
    select 'masked' as p_metric, 'masked' as label, 0.99 as q
    union all select 'clean', 'clean', 0.99
),
{{hist_quantiles}}
select
    m.hop_kind as hop_kind, m.hop_name as hop_name,
    m.n_calls as calls,
    m.n_masked as masked_calls,
    m.n_absorbed as absorbed_429s,
    q.value as masked_p99_ms,
    c.value as clean_p99_ms,
    m.n_task_ok / m.n_masked as masked_task_success,
    m.top as examples,
    m.first_ns as first_ns,
    m.last_ns as last_ns
from masking as m
left join quantiles as q on q.grp = (m.hop_kind, m.hop_name) and q.label = 'masked'
left join quantiles as c on c.grp = (m.hop_kind, m.hop_name) and c.label = 'clean'
order by absorbed_429s desc
settings join_use_nulls = 1, enable_materialized_cte = 1
