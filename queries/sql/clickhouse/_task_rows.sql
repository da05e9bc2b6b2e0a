task_rows as (
    -- task counts at t_ns: per whole hour or minute and shard from task_minutes(_hourly),
    -- per task from raw_tasks (the counts of collector/store/rollups.py TASK_COUNTS, DuckDB's
    -- _task_rows.sql)
    select minute_ns as t_ns, task_type, tenant_id, service_name, agent, finished, success,
        degraded, failed, budget_exhausted, rejected, lost, cancelled, in_progress,
        gateway_answered, gateway_ok
    from {{rollup_tiers(task_minutes)}}
    where true
{{task_filters}}
    union all
    select r.t_ns, r.task_type, r.tenant_id, r.service_name, r.agent,
        toInt64(coalesce(r.finished and r.outcome <> 'cancelled', false)),
        toInt64(coalesce(r.finished and r.outcome = 'success', false)),
        toInt64(coalesce(r.finished and r.outcome = 'degraded', false)),
        toInt64(coalesce(r.finished and r.outcome = 'failed', false)),
        toInt64(coalesce(r.finished and r.outcome = 'budget_exhausted', false)),
        toInt64(coalesce(r.finished and r.outcome = 'rejected', false)),
        toInt64(coalesce(r.finished and r.outcome = 'lost', false)),
        toInt64(coalesce(r.finished and r.outcome = 'cancelled', false)),
        toInt64(coalesce(not r.finished, false)),
        toInt64(coalesce(r.finished and r.outcome not in ('cancelled', 'lost')
                         and r.gateway_ok is not null, false)),
        toInt64(coalesce(r.finished and r.outcome not in ('cancelled', 'lost') and r.gateway_ok,
                         false))
    from raw_tasks as r
)
