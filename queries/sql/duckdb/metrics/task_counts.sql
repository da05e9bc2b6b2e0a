-- queries.metrics: the tasks of whole minutes [roll_lo, roll_hi) per task type and outcome
-- (the minutes outside its whole hours from task_minutes, the hours from the hour tier)
select task_type, sum(success) as success, sum(degraded) as degraded, sum(failed) as failed,
    sum(budget_exhausted) as budget_exhausted, sum(rejected) as rejected, sum(lost) as lost,
    sum(cancelled) as cancelled, sum(gateway_answered) as gateway_answered,
    sum(gateway_ok) as gateway_ok
from (select * from task_minutes_hourly where {{hourly_range}}
      union all
      select * from task_minutes where {{minute_range}})
group by task_type
