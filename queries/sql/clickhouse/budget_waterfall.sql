-- queries.budget.budget_waterfall: where did the budget of the window's tasks go, by hop kind?
-- One row per hop kind (biggest first), each with the window's totals (one row of totals and
-- null kind columns when no task had a span). Over `tasks` and the self times materialization
-- stored on each (collector/tasks/self_time.py), as DuckDB's _budget_tasks.sql, _budget_rows.sql
-- and _budget_hop_rows.sql over raw rows: no budget rollups on ClickHouse yet, so roll_lo and
-- roll_hi are not used. Times in whole microseconds.
with budget_tasks as (
    -- finished in the window (by end), root arrived, cancelled and lost excluded
    -- (t_: the task's own; the sums below take the names of DuckDB's columns)
    select budget_total_ms > 0 as budgeted, round(coalesce(duration_ms, 0) * 1000) as t_duration_us,
        if(budgeted, round(budget_total_ms * 1000), 0) as t_budget_us, self_times
    from tasks
    where finished and outcome not in ('cancelled', 'lost') and root_span_id is not null
      and end_ns >= {start_ns:Int64} and end_ns < {end_ns:Int64}
{{task_filters}}
),
totals as (
    select 1 as one, count() as tasks, countIf(budgeted) as tasks_with_budget,
        sum(t_duration_us) as duration_us,
        sumIf(t_duration_us, budgeted) as budgeted_duration_us,
        coalesce(sum(t_budget_us), 0) as budget_us  -- a sum of nullables over no task is null
    from budget_tasks
),
kinds as (
    select 1 as one, hop.hop_kind as hop_kind, count() as tasks_with_hop,
        sum(hop.self_us) as self_us, sumIf(hop.self_us, budgeted) as budgeted_self_us
    from budget_tasks
    array join self_times as hop
    group by hop_kind
)
select totals.* except (one), kinds.* except (one)
from totals
left join kinds on kinds.one = totals.one
order by kinds.self_us desc, kinds.hop_kind
settings join_use_nulls = 1
