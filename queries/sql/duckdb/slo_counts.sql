-- queries.slo: per window ending at $end_ns and task type, the finished tasks (cancelled
-- excluded) and how many succeeded or were degraded; windows are lengths in ns
with windows as (
    select unnest($windows_ns::bigint[]) as window_ns
),
finished as (
    select task_type, outcome, end_ns
    from tasks
    where finished and outcome <> 'cancelled'
      and end_ns >= $end_ns - $longest_ns and end_ns < $end_ns
      and ($task_type is null or task_type = $task_type)
)
select
    w.window_ns, f.task_type,
    count(*) filter (where f.outcome = 'success') as success,
    count(*) filter (where f.outcome = 'degraded') as degraded,
    count(*) as total
from windows w
join finished f on f.end_ns >= $end_ns - w.window_ns
group by w.window_ns, f.task_type
