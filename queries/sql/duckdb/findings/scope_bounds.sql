-- queries.findings.scope.task_scope: which tasks are in scope, when their spans ran, and how
-- many spans were read (to check against the tasks' span_count)
select
    (select list(task_id) from temp.tasks) as task_ids,
    min(start_ns) as start_ns,
    max(end_ns) as end_ns,
    count(*) as spans
from temp.spans
