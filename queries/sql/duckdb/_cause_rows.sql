cause_rows as (
    -- blamed tasks at t_ns per first failing hop: per minute from cause_minutes, per task from
    -- raw_blamed; lost_us is the tasks' summed duration in whole microseconds
    select minute_ns as t_ns, ffh_kind, ffh_name, ffh_reason, tasks, lost_us, failed, degraded,
        budget_exhausted, rejected
    from cause_minutes_tiers
    where {{tier_range}}
{{task_filters}}
    union all
    select end_ns, ffh_kind, ffh_name, ffh_reason, 1, round(coalesce(duration_ms, 0) * 1000),
        (outcome = 'failed')::integer, (outcome = 'degraded')::integer,
        (outcome = 'budget_exhausted')::integer, (outcome = 'rejected')::integer
    from raw_blamed
)
