-- queries.budget.budget_waterfall: where did the budget of the window's tasks go, by hop kind?
-- One row per hop kind (biggest first), each with the window's totals (one row of totals and
-- null kind columns when no task had a span). Whole minutes and hours from the rollups
-- budget_minutes and budget_hop_minutes (and their hour tiers), summed over shards; the
-- window's edges from raw_tasks and the self times materialization stored on each task
-- (collector/tasks/self_time.py), as DuckDB's _budget_rows.sql and _budget_hop_rows.sql.
-- Times in whole microseconds.
with {{raw_tasks}},
budget_tasks as (
    -- finished in the window's edges (by end), root arrived, cancelled and lost excluded
    -- (collector/store/rollups.py BUDGET; t_: the task's own values)
    select coalesce(budget_total_ms > 0, false) as budgeted,
        round(coalesce(duration_ms, 0) * 1000) as t_duration_us,
        if(budgeted, round(budget_total_ms * 1000), 0) as t_budget_us, self_times
    from raw_tasks
    where finished and outcome not in ('cancelled', 'lost') and root_span_id is not null
),
budget_rows as (
    select tasks, tasks_with_budget, duration_us, budgeted_duration_us, budget_us
    from {{rollup_tiers(budget_minutes)}}
    where true
{{task_filters}}
    union all
    select 1, toInt64(budgeted), t_duration_us, if(budgeted, t_duration_us, 0), t_budget_us
    from budget_tasks
),
budget_hop_rows as (
    select hop_kind, tasks_with_hop, self_us, budgeted_self_us
    from {{rollup_tiers(budget_hop_minutes)}}
    where true
{{task_filters}}
    union all
    select hop.hop_kind, 1, toFloat64(hop.self_us), if(budgeted, toFloat64(hop.self_us), 0)
    from budget_tasks
    array join self_times as hop
),
totals as (
    -- columns read as r.* and h.*: unqualified names would be these selects' own aliases
    select 1 as one, coalesce(sum(r.tasks), 0) as tasks,
        coalesce(sum(r.tasks_with_budget), 0) as tasks_with_budget,
        coalesce(sum(r.duration_us), 0) as duration_us,
        coalesce(sum(r.budgeted_duration_us), 0) as budgeted_duration_us,
        coalesce(sum(r.budget_us), 0) as budget_us
    from budget_rows as r
),
kinds as (
    select 1 as one, h.hop_kind as hop_kind, sum(h.tasks_with_hop) as tasks_with_hop,
        sum(h.self_us) as self_us, sum(h.budgeted_self_us) as budgeted_self_us
    from budget_hop_rows as h
    group by h.hop_kind
    having sum(h.tasks_with_hop) > 0
)
select totals.* except (one), kinds.* except (one)
from totals
left join kinds on kinds.one = totals.one
order by kinds.self_us desc, kinds.hop_kind
settings join_use_nulls = 1
