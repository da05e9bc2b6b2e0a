-- queries.metrics: the blamed tasks of whole minutes [roll_lo, roll_hi) per task type and first
-- failing hop (kind, name, reason), by outcome, and their summed duration (lost_us, µs)
select task_type, ffh_kind, ffh_name, ffh_reason, sum(failed) as failed,
    sum(degraded) as degraded, sum(budget_exhausted) as budget_exhausted,
    sum(rejected) as rejected, sum(lost_us) as lost_us
from (select * from cause_minutes_hourly where {{hourly_range}}
      union all
      select * from cause_minutes where {{minute_range}})
group by task_type, ffh_kind, ffh_name, ffh_reason
