-- queries.findings.scope.task_scope: the task asked about, by its id (the primary key), as a
-- temporary table that shadows the view `tasks` on this store's cursor only
create or replace temp table tasks as
select *
from main.tasks
where task_id = $task_id
