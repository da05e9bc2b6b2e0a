-- queries.findings.scope: the scoped tasks, as DuckDB's scope_task (or scope_trace_tasks) table holds them
(select * from tasks where task_id in {scope_task_ids:Array(String)})
