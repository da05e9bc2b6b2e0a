counted as (
    -- the counts and quantiles of each group (column grp of `grouped`)
    select
        grp,
        count(*) filter (where finished and outcome <> 'cancelled') as finished,
        count(*) filter (where finished and outcome = 'success') as success,
        count(*) filter (where finished and outcome = 'degraded') as degraded,
        count(*) filter (where finished and outcome = 'failed') as failed,
        count(*) filter (where finished and outcome = 'budget_exhausted') as budget_exhausted,
        count(*) filter (where finished and outcome = 'rejected') as rejected,
        count(*) filter (where finished and outcome = 'lost') as lost,
        count(*) filter (where finished and outcome = 'cancelled') as cancelled,
        count(*) filter (where not finished) as in_progress,
        count(*) filter (where finished and outcome not in ('cancelled', 'lost')
                         and gateway_ok is not null) as gateway_answered,
        count(*) filter (where finished and outcome not in ('cancelled', 'lost')
                         and gateway_ok) as gateway_ok,
        -- [p50, p95, p99] of task duration, tasks whose root ended
        quantile_cont(duration_ms, [0.5, 0.95, 0.99])
            filter (where finished and outcome not in ('cancelled', 'lost')) as latency,
        quantile_cont(budget_used_ratio, [0.5, 0.95])
            filter (where finished and outcome not in ('cancelled', 'lost')) as budget_used
    from grouped
    group by grp
)
