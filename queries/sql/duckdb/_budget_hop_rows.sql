budget_hop_rows as (
    -- each hop kind's self time (whole µs) in the window's tasks: per minute from
    -- budget_hop_minutes, per task from the self times stored on budget_tasks (rollups.py)
    select hop_kind, tasks_with_hop, self_us, budgeted_self_us
    from budget_hop_minutes_tiers
    where {{tier_range}}
{{task_filters}}
    union all
    select hop_kind, 1, self_us, case when budget_total_ms > 0 then self_us else 0 end
    from (select budget_total_ms, unnest(self_times, recursive := true) from budget_tasks)
)
