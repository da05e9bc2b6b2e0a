-- queries.tasks.task_trace_ids: which trace holds each of these tasks?
select task_id, trace_id
from tasks
where list_contains($task_ids, task_id)
