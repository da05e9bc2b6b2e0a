-- snippet: counts and histogram quantiles of each group (column grp of `grouped`), as `sla`
counted as (
    -- columns read as g.*: an unqualified `finished` would be this select's own alias
    select g.grp as grp,
        countIf(g.finished and g.outcome <> 'cancelled') as finished,
        countIf(g.finished and g.outcome = 'success') as success,
        countIf(g.finished and g.outcome = 'degraded') as degraded,
        countIf(g.finished and g.outcome = 'failed') as failed,
        countIf(g.finished and g.outcome = 'budget_exhausted') as budget_exhausted,
        countIf(g.finished and g.outcome = 'rejected') as rejected,
        countIf(g.finished and g.outcome = 'lost') as lost,
        countIf(g.finished and g.outcome = 'cancelled') as cancelled,
        countIf(not g.finished) as in_progress,
        countIf(g.finished and g.outcome not in ('cancelled', 'lost')
                and g.gateway_ok is not null) as gateway_answered,
        countIf(g.finished and g.outcome not in ('cancelled', 'lost') and g.gateway_ok)
            as gateway_ok
    from grouped as g
    group by g.grp
),
hist as (
    -- task duration and budget use of finished tasks whose root ended, as exponential-histogram
    -- buckets (scale 5): the same buckets as DuckDB's rollups (collector/store/rollups.py)
    select grp, metric, {{hist_bucket}} as bucket, count() as count
    from (
        select grp, 'latency_ms' as metric, duration_ms as value, finished, outcome
        from grouped
        union all
        select grp, 'budget_used', budget_used_ratio, finished, outcome
        from grouped
    )
    where finished and outcome not in ('cancelled', 'lost') and value is not null
    group by grp, metric, bucket
),
probs as (
    select *
    from values('p_metric String, label String, q Float64',
                ('latency_ms', 'latency_p50_ms', 0.5), ('latency_ms', 'latency_p95_ms', 0.95),
                ('latency_ms', 'latency_p99_ms', 0.99), ('budget_used', 'budget_used_p50', 0.5),
                ('budget_used', 'budget_used_p95', 0.95))
),
{{hist_quantiles}},
valued as (
    select grp,
        maxIfOrNull(value, label = 'latency_p50_ms') as latency_p50_ms,
        maxIfOrNull(value, label = 'latency_p95_ms') as latency_p95_ms,
        maxIfOrNull(value, label = 'latency_p99_ms') as latency_p99_ms,
        maxIfOrNull(value, label = 'budget_used_p50') as budget_used_p50,
        maxIfOrNull(value, label = 'budget_used_p95') as budget_used_p95
    from quantiles
    group by grp
),
sla as (
    select counted.*, valued.* except (grp)
    from counted
    left join valued on isNotDistinctFrom(valued.grp, counted.grp)
    settings join_use_nulls = 1
)
