-- queries.tasks.get_task: the row of one task
select * from tasks where task_id = {task_id:String}
