-- queries.findings.scope.task_scope: the spans of the scoped tasks, shadowing the view `spans`
create or replace temp table spans as
select *
from main.spans
where task_id in (select task_id from temp.tasks)
