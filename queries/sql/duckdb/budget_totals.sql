-- queries.budget.budget_waterfall: the window's tasks, their budgets and where their spans start
with {{budget_tasks}}
select
    count(*) as tasks,
    count(*) filter (where budget_total_ms > 0) as tasks_with_budget,
    avg(duration_ms) as avg_duration_ms,
    avg(budget_total_ms) filter (where budget_total_ms > 0) as avg_budget_ms,
    1 - sum(duration_ms) filter (where budget_total_ms > 0)
        / sum(budget_total_ms) filter (where budget_total_ms > 0) as unused_budget_share,
    min(start_ns) as first_start_ns, max(end_ns) as last_end_ns, sum(span_count) as span_count
from window_tasks
