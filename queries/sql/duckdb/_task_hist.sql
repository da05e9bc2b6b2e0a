task_hist as (
    -- task duration (latency_ms) and budget use (budget_used) of finished tasks whose root
    -- ended (cancelled and lost excluded), as exponential-histogram buckets at t_ns
    select minute_ns as t_ns, task_type, tenant_id, service_name, agent, metric, bucket, count
    from task_histograms_tiers
    where {{tier_range}}
{{task_filters}}
    union all
    select t_ns, task_type, tenant_id, service_name, agent, metric, {{hist_bucket}} as bucket,
        1 as count
    from (
        select *, 'latency_ms' as metric, duration_ms as value
        from raw_tasks
        union all
        select *, 'budget_used' as metric, budget_used_ratio as value
        from raw_tasks
    )
    where finished and outcome not in ('cancelled', 'lost') and value is not null
)
