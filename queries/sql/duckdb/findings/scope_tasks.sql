-- queries.findings.scope.task_scope: the tasks asked about (by task id, or holding a trace),
-- as a temporary table that shadows the view `tasks` on this store's cursor only
create or replace temp table tasks as
select *
from main.tasks
where task_id = $task_id
   or task_id in (select task_id from main.spans where trace_id = $trace_id)
