budget_rows as (
    -- the window's tasks, their durations and budgets (whole µs): per minute from
    -- budget_minutes, per task from budget_tasks (the sums of collector/store/rollups.py BUDGET)
    select tasks, tasks_with_budget, duration_us, budgeted_duration_us, budget_us
    from budget_minutes_tiers
    where {{tier_range}}
{{task_filters}}
    union all
    select 1, (budget_total_ms > 0)::integer, round(coalesce(duration_ms, 0) * 1000),
        case when budget_total_ms > 0 then round(coalesce(duration_ms, 0) * 1000) else 0 end,
        case when budget_total_ms > 0 then round(budget_total_ms * 1000) else 0 end
    from budget_tasks
)
