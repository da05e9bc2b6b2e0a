-- queries.findings.scope.task_scope: which tasks are in scope, and when their spans ran
select
    (select list(task_id) from temp.tasks) as task_ids,
    min(start_ns) as start_ns,
    max(end_ns) as end_ns
from temp.spans
