-- queries.findings.scope.task_scope: the spans of the scoped tasks, shadowing the view `spans`,
-- read only where they can start (DuckDB's zone maps on start_ns skip the other row groups)
create or replace temp table spans as
select *
from main.spans
where task_id in (select task_id from temp.tasks)
  and start_ns >= $lo_ns and start_ns <= $hi_ns
