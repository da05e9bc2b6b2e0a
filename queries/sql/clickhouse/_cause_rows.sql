cause_rows as (
    -- blamed tasks at t_ns per first failing hop: per whole hour or minute and shard from
    -- cause_minutes(_hourly), per task from raw_tasks (DuckDB's _cause_rows.sql); lost_us is
    -- the tasks' summed duration in whole microseconds
    select minute_ns as t_ns, ffh_kind, ffh_name, ffh_reason, tasks, lost_us, failed, degraded,
        budget_exhausted, rejected
    from {{rollup_tiers(cause_minutes)}}
    where true
{{task_filters}}
    union all
    select r.t_ns, r.ffh_kind, r.ffh_name, r.ffh_reason, 1,
        round(coalesce(r.duration_ms, 0) * 1000), toInt64(r.outcome = 'failed'),
        toInt64(r.outcome = 'degraded'), toInt64(r.outcome = 'budget_exhausted'),
        toInt64(r.outcome = 'rejected')
    from raw_tasks as r
    where r.finished and r.outcome in ('failed', 'degraded', 'budget_exhausted', 'rejected')
)
