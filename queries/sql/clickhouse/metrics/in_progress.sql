-- queries.metrics: tasks in progress now per task type, among those that started in the hours
-- from since_ns on (a task in progress counts in the hour holding its start), from the hour
-- tier of task_minutes, summed over shards
select r.task_type as task_type, sum(r.in_progress) as tasks
from task_minutes_hourly as r
where r.minute_ns >= {since_ns:Int64}
group by r.task_type
having sum(r.in_progress) <> 0
