-- queries.tasks.task_trace_ids: which trace holds each of these tasks?
select task_id, trace_id
from tasks
where has({task_ids:Array(String)}, task_id)
