-- queries.tasks.get_task: every span of one task, in start order
select *
from spans
where task_id = {task_id:String}
order by start_ns, span_id
limit {limit:UInt64}
