-- queries.findings.scope.task_scope: end the scope (the views show through again)
drop table if exists temp.tasks
