-- snippet: the counts and quantiles of each group (column grp of `grouped` and `grouped_hist`)
counted as (
    select grp,
        sum(finished) as finished, sum(success) as success, sum(degraded) as degraded,
        sum(failed) as failed, sum(budget_exhausted) as budget_exhausted,
        sum(rejected) as rejected, sum(lost) as lost, sum(cancelled) as cancelled,
        sum(in_progress) as in_progress, sum(gateway_answered) as gateway_answered,
        sum(gateway_ok) as gateway_ok
    from grouped
    group by grp
    -- a group of rows that cancel out (a task counted in progress under no type, then
    -- finished under its type) is no group: every raw task counts once in one of these
    having sum(finished) <> 0 or sum(cancelled) <> 0 or sum(in_progress) <> 0
),
hist as (
    select grp, metric, bucket, count
    from grouped_hist
),
probs as (
    select *
    from (values ('latency_ms', 'latency_p50_ms', 0.5), ('latency_ms', 'latency_p95_ms', 0.95),
                 ('latency_ms', 'latency_p99_ms', 0.99), ('budget_used', 'budget_used_p50', 0.5),
                 ('budget_used', 'budget_used_p95', 0.95)) as p(p_metric, label, q)
),
{{hist_quantiles}},
valued as (
    select grp,
        max(value) filter (where label = 'latency_p50_ms') as latency_p50_ms,
        max(value) filter (where label = 'latency_p95_ms') as latency_p95_ms,
        max(value) filter (where label = 'latency_p99_ms') as latency_p99_ms,
        max(value) filter (where label = 'budget_used_p50') as budget_used_p50,
        max(value) filter (where label = 'budget_used_p95') as budget_used_p95
    from quantiles
    group by grp
),
sla as (
    select counted.*, valued.* exclude (grp)
    from counted
    left join valued on valued.grp is not distinct from counted.grp
)
