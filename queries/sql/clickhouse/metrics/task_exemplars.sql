-- queries.metrics: exemplars among the tasks that finished in [start_ns, end_ns), per task type
-- and outcome: the latest task's trace id, and the slowest rated task (trace id, duration, end)
select t.task_type as task_type, t.outcome as outcome,
    argMax(t.trace_id, t.end_ns) as trace_id, max(t.end_ns) as end_ns,
    argMaxIf(t.trace_id, t.duration_ms, t.outcome not in ('cancelled', 'lost')) as slow_trace_id,
    maxIfOrNull(t.duration_ms, t.outcome not in ('cancelled', 'lost')) as slow_ms,
    argMaxIf(t.end_ns, t.duration_ms, t.outcome not in ('cancelled', 'lost')) as slow_end_ns
from tasks as t
where t.finished and t.end_ns >= {start_ns:Int64} and t.end_ns < {end_ns:Int64}
  and t.trace_id is not null
group by t.task_type, t.outcome
