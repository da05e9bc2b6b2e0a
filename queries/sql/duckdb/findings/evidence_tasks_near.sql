-- queries.findings.evidence.tasks_from: is the task of every span that ended in [$lo_ns, $hi_ns)
-- among the tasks that started in [$reach_ns, $hi_ns)? (A task missing there, or a span
-- without a task, makes the questions of FAR_TASKS read every older task too.)
select count(*) = 0 as near
from (select task_id from spans where end_ns >= $lo_ns and end_ns < $hi_ns) s
anti join (select task_id from tasks where start_ns >= $reach_ns and start_ns < $hi_ns) t
       on t.task_id = s.task_id
