-- queries.metrics: the tasks that finished in the whole minutes [start_ns, end_ns) per task type
-- and outcome. Over the tasks view (not the rollups: roll_lo/roll_hi unused).
select t.task_type as task_type,
    countIf(t.outcome = 'success') as success, countIf(t.outcome = 'degraded') as degraded,
    countIf(t.outcome = 'failed') as failed,
    countIf(t.outcome = 'budget_exhausted') as budget_exhausted,
    countIf(t.outcome = 'rejected') as rejected, countIf(t.outcome = 'lost') as lost,
    countIf(t.outcome = 'cancelled') as cancelled,
    countIf(t.outcome not in ('cancelled', 'lost') and t.gateway_ok is not null)
        as gateway_answered,
    countIf(t.outcome not in ('cancelled', 'lost') and t.gateway_ok) as gateway_ok
from tasks as t
where t.finished and t.end_ns >= {start_ns:Int64} and t.end_ns < {end_ns:Int64}
group by t.task_type
