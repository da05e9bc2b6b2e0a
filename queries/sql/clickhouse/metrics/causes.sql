-- queries.metrics: the blamed tasks that finished in [start_ns, end_ns) per task type and first
-- failing hop (kind, name, reason), by outcome, and their summed duration (lost_us, µs). Over
-- the tasks view (not the rollups).
select t.task_type as task_type, t.ffh_kind as ffh_kind, t.ffh_name as ffh_name,
    t.ffh_reason as ffh_reason,
    countIf(t.outcome = 'failed') as failed, countIf(t.outcome = 'degraded') as degraded,
    countIf(t.outcome = 'budget_exhausted') as budget_exhausted,
    countIf(t.outcome = 'rejected') as rejected,
    sum(round(coalesce(t.duration_ms, 0) * 1000)) as lost_us
from tasks as t
where t.finished and t.outcome in ('failed', 'degraded', 'budget_exhausted', 'rejected')
  and t.end_ns >= {start_ns:Int64} and t.end_ns < {end_ns:Int64}
group by t.task_type, t.ffh_kind, t.ffh_name, t.ffh_reason
