-- queries.metrics: the blamed tasks of whole minutes [roll_lo, roll_hi) per task type and first
-- failing hop (kind, name, reason), by outcome, and their summed duration (lost_us, µs), from
-- cause_minutes and its hour tier, summed over shards
select r.task_type as task_type, r.ffh_kind as ffh_kind, r.ffh_name as ffh_name,
    r.ffh_reason as ffh_reason, sum(r.failed) as failed, sum(r.degraded) as degraded,
    sum(r.budget_exhausted) as budget_exhausted, sum(r.rejected) as rejected,
    sum(r.lost_us) as lost_us
from {{rollup_tiers(cause_minutes)}} as r
group by r.task_type, r.ffh_kind, r.ffh_name, r.ffh_reason
