-- queries.findings.scope.task_scope: the tasks holding the trace asked about, and the task
-- asked about if both are (spans have no index on trace_id: a scan), as a temporary table that
-- shadows the view `tasks` on this store's cursor only
create or replace temp table tasks as
select *
from main.tasks
where task_id = $task_id
   or task_id in (select task_id from main.spans where trace_id = $trace_id)
