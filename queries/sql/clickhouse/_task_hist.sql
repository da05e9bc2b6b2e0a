task_hist as (
    -- task duration (latency_ms) and budget use (budget_used) of finished tasks whose root
    -- ended (cancelled and lost excluded), as exponential-histogram buckets at t_ns: per
    -- whole hour or minute and shard from task_histograms(_hourly), per task from raw_tasks
    select minute_ns as t_ns, task_type, tenant_id, service_name, agent, metric, bucket, count
    from {{rollup_tiers(task_histograms)}}
    where true
{{task_filters}}
    union all
    select t_ns, task_type, tenant_id, service_name, agent, metric, {{hist_bucket}} as bucket,
        1 as count
    from (select t_ns, task_type, tenant_id, service_name, agent, m.1 as metric, m.2 as value,
                 finished, outcome
          from raw_tasks
          array join [('latency_ms', duration_ms), ('budget_used', budget_used_ratio)] as m)
    where finished and outcome not in ('cancelled', 'lost') and value is not null
)
