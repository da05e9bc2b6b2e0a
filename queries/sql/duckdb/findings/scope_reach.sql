-- queries.findings.scope.task_scope: the scoped tasks' times and span counts, to read their
-- spans only where they can start
select start_ns, end_ns, span_count from temp.tasks
