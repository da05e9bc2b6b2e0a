-- queries.budget.budget_waterfall: where did the budget of the window's tasks go, by hop kind?
-- One row per hop kind (biggest first), each with the window's totals (one row of totals and
-- null kind columns when no task had a span)
with {{budget_tasks}}, {{budget_rows}}, {{budget_hop_rows}},
totals as (
    select coalesce(sum(tasks), 0) as tasks,
        coalesce(sum(tasks_with_budget), 0) as tasks_with_budget,
        coalesce(sum(duration_us), 0) as duration_us,
        coalesce(sum(budgeted_duration_us), 0) as budgeted_duration_us,
        coalesce(sum(budget_us), 0) as budget_us
    from budget_rows
),
kinds as (
    select hop_kind, sum(tasks_with_hop) as tasks_with_hop, sum(self_us) as self_us,
        sum(budgeted_self_us) as budgeted_self_us
    from budget_hop_rows
    group by hop_kind
    having sum(tasks_with_hop) > 0
)
select totals.*, kinds.*
from totals
left join kinds on true
order by kinds.self_us desc, kinds.hop_kind
