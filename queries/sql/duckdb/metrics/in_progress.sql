-- queries.metrics: tasks in progress now per task type, among those that started in the hours
-- from $since_ns on (a task in progress counts in the hour holding its start)
select task_type, sum(in_progress) as tasks
from task_minutes_hourly
where minute_ns >= $since_ns
group by task_type
having sum(in_progress) <> 0
