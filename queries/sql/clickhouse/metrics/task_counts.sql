-- queries.metrics: the tasks of whole minutes [roll_lo, roll_hi) per task type and outcome
-- (the minutes outside its whole hours from task_minutes, the hours from the hour tier),
-- summed over shards; columns read as r.* (unqualified names would be the aliases)
select r.task_type as task_type, sum(r.success) as success, sum(r.degraded) as degraded,
    sum(r.failed) as failed, sum(r.budget_exhausted) as budget_exhausted,
    sum(r.rejected) as rejected, sum(r.lost) as lost, sum(r.cancelled) as cancelled,
    sum(r.gateway_answered) as gateway_answered, sum(r.gateway_ok) as gateway_ok
from {{rollup_tiers(task_minutes)}} as r
group by r.task_type
