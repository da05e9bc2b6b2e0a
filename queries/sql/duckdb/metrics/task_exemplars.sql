-- queries.metrics: exemplars among the tasks that finished in [start_ns, end_ns), per task type
-- and outcome: the latest task's trace id, and the slowest rated task (trace id, duration, end)
select task_type, outcome,
    arg_max(trace_id, end_ns) as trace_id, max(end_ns) as end_ns,
    arg_max(trace_id, duration_ms) filter (where outcome not in ('cancelled', 'lost'))
        as slow_trace_id,
    max(duration_ms) filter (where outcome not in ('cancelled', 'lost')) as slow_ms,
    arg_max(end_ns, duration_ms) filter (where outcome not in ('cancelled', 'lost'))
        as slow_end_ns
from tasks
where finished and end_ns >= $start_ns and end_ns < $end_ns and trace_id is not null
group by task_type, outcome
