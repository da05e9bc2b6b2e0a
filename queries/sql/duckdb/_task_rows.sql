task_rows as (
    -- task counts at t_ns: per minute from task_minutes, per task from raw_tasks (the counts
    -- of collector/store/rollups.py TASK_COUNTS)
    select minute_ns as t_ns, task_type, tenant_id, service_name, agent, finished, success,
        degraded, failed, budget_exhausted, rejected, lost, cancelled, in_progress,
        gateway_answered, gateway_ok
    from task_minutes_tiers
    where {{tier_range}}
{{task_filters}}
    union all
    select t_ns, task_type, tenant_id, service_name, agent,
        coalesce(finished and outcome <> 'cancelled', false)::integer,
        coalesce(finished and outcome = 'success', false)::integer,
        coalesce(finished and outcome = 'degraded', false)::integer,
        coalesce(finished and outcome = 'failed', false)::integer,
        coalesce(finished and outcome = 'budget_exhausted', false)::integer,
        coalesce(finished and outcome = 'rejected', false)::integer,
        coalesce(finished and outcome = 'lost', false)::integer,
        coalesce(finished and outcome = 'cancelled', false)::integer,
        coalesce(not finished, false)::integer,
        coalesce(finished and outcome not in ('cancelled', 'lost')
                 and gateway_ok is not null, false)::integer,
        coalesce(finished and outcome not in ('cancelled', 'lost') and gateway_ok, false)::integer
    from raw_tasks
)
