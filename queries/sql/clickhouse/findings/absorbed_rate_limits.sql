-- queries.findings.rate_limit_masking.absorbed_rate_limits: which hops had 429s that retries absorbed, and what did it cost in latency?
-- (the verdict over the window's evidence, _evidence_absorbed_rate_limits.sql, asked inline:
-- the masked and the clean calls' p99s from their exponential histograms, as DuckDB's, within
-- 1.1 %, so both engines give the same numbers)
with evidence_rows as materialized ({{evidence_absorbed_rate_limits}}),
masking as (
    select
        hop_kind, hop_name,
        toInt64(sum(n['calls'])) as n_calls,
        toInt64(sum(n['masked_calls'])) as n_masked,
        toInt64(sum(n['absorbed_429s'])) as n_absorbed,
        sum(n['masked_task_ok']) as n_task_ok,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns,
        {{evidence_best5}} as top5
    from evidence_rows
    group by hop_kind, hop_name
    having n_absorbed >= {rate_limit_min_absorbed:Float64}
       and n_masked >= {rate_limit_min_share:Float64} * n_calls
),
hist_hops as (select hop_kind, hop_name from masking),
hist as ({{evidence_hist}}),
probs as (
    select 'masked' as p_metric, 'masked' as label, 0.99 as q
    union all select 'clean', 'clean', 0.99
),
{{hist_quantiles}},
valued as (
    -- a hop's quantiles side by side: `quantiles` read once (ClickHouse analyses a CTE again
    -- at each reference, materialized or not)
    select grp,
           maxIfOrNull(value, label = 'masked') as masked_p99,
           maxIfOrNull(value, label = 'clean') as clean_p99
    from quantiles
    group by grp
)
select
    m.hop_kind as hop_kind, m.hop_name as hop_name,
    m.n_calls as calls,
    m.n_masked as masked_calls,
    m.n_absorbed as absorbed_429s,
    q.masked_p99 as masked_p99_ms,
    q.clean_p99 as clean_p99_ms,
    m.n_task_ok / m.n_masked as masked_task_success,
    m.top5 as examples,
    m.first_ns as first_ns,
    m.last_ns as last_ns
from masking as m
left join valued as q on q.grp = (m.hop_kind, m.hop_name)
order by absorbed_429s desc
settings join_use_nulls = 1, enable_materialized_cte = 1
