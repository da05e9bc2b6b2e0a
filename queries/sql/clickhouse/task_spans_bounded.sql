-- queries.tasks.get_task: the same spans, read only where they can start (partition pruning
-- on the traces table's Timestamp). `expected_spans` is the task's span_count.
select *, (select span_count from tasks where task_id = {task_id:String}) as expected_spans
from spans
where trace_id in (select trace_id from agentsla_task_traces final where task_id = {task_id:String})
  and task_id = {task_id:String} and start_ns >= {lo_ns:Int64} and start_ns <= {hi_ns:Int64}
order by start_ns, span_id
limit {limit:UInt64}
