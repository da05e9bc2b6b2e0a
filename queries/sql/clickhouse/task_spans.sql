-- queries.tasks.get_task: every span of one task, in start order, read by the task's traces
-- (agentsla_task_traces), so the spans view joins only their facts
select *
from spans
where trace_id in (select trace_id from agentsla_task_traces final where task_id = {task_id:String})
  and task_id = {task_id:String}
order by start_ns, span_id
limit {limit:UInt64}
