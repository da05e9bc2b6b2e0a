-- snippet: counts and histogram quantiles of each group (column grp of `grouped`, task_rows
-- with a group, and of `grouped_hist`, task_hist with one), as `sla`
counted as (
    -- columns read as g.*: an unqualified `finished` would be this select's own alias
    select g.grp as grp,
        sum(g.finished) as finished, sum(g.success) as success, sum(g.degraded) as degraded,
        sum(g.failed) as failed, sum(g.budget_exhausted) as budget_exhausted,
        sum(g.rejected) as rejected, sum(g.lost) as lost, sum(g.cancelled) as cancelled,
        sum(g.in_progress) as in_progress, sum(g.gateway_answered) as gateway_answered,
        sum(g.gateway_ok) as gateway_ok
    from grouped as g
    group by g.grp
),
hist as (
    -- the same buckets as DuckDB's rollups (collector/store/rollups.py), summed per group
    select h.grp as grp, h.metric as metric, h.bucket as bucket, sum(h.count) as count
    from grouped_hist as h
    group by h.grp, h.metric, h.bucket
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
