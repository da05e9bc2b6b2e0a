-- queries.slo: per window ending at end_ns and task type, the finished tasks (cancelled
-- excluded) and how many succeeded or were degraded; windows are lengths in ns. Over the
-- tasks table (not the rollups: the cut parameters unused).
select window_ns, task_type, countIf(outcome = 'success') as success,
    countIf(outcome = 'degraded') as degraded, count() as total
from tasks
array join {windows_ns:Array(Int64)} as window_ns
where finished and outcome <> 'cancelled'
  and end_ns >= {end_ns:Int64} - {longest_ns:Int64} and end_ns < {end_ns:Int64}
  and end_ns >= {end_ns:Int64} - window_ns
  and ({task_type:Nullable(String)} is null or task_type = {task_type:Nullable(String)})
group by window_ns, task_type
