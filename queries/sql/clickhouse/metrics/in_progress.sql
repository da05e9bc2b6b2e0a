-- queries.metrics: tasks in progress now per task type, among those that started from since_ns
-- (an hour) on. Over the tasks view (not the rollups).
select t.task_type as task_type, count() as tasks
from tasks as t
where not t.finished and t.start_ns >= {since_ns:Int64}
group by t.task_type
