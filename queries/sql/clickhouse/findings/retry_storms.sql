-- queries.findings.retry_amplification.retry_storms: which hops had minutes where most attempts were retries?
-- (the verdict over the window's evidence, _evidence_retry_storms.sql, asked inline)
with evidence_rows as materialized ({{evidence_retry_storms}}),
minutes as (
    select
        minute_ns, hop_kind, hop_name,
        sum(n['attempts']) as n_attempts,
        toInt64(sum(n['retries'])) as n_retries,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns,
        -- each minute's best five (highest attempt number first)
        {{evidence_best5}} as top5
    from evidence_rows
    group by minute_ns, hop_kind, hop_name
),
storms as (
    select *, n_retries / n_attempts as retry_share
    from minutes
    where n_retries >= {retry_storm_min_retries:Float64}
      and n_retries >= {retry_storm_share:Float64} * n_attempts
)
select
    s.hop_kind as hop_kind, s.hop_name as hop_name,
    count() as storm_minutes,
    max(s.n_retries) as peak_retries_per_minute,
    max(s.retry_share) as peak_retry_share,
    sum(s.n_retries) as retries,
    -- the examples of the minute with the most retries (the latest of equals)
    argMax(s.top5, (s.n_retries, s.minute_ns)) as examples,
    min(s.first_ns) as first_ns,
    max(s.last_ns) as last_ns
from storms as s
group by s.hop_kind, s.hop_name
order by peak_retries_per_minute desc
settings join_use_nulls = 1, enable_materialized_cte = 1
