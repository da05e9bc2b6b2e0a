-- queries.findings.scope: the scoped tasks' spans, read by their traces (the filter on
-- trace_id reaches the span facts' key), as DuckDB's scope_spans table holds them
(select * from spans
 where trace_id in {scope_trace_ids:Array(String)}
   and task_id in {scope_task_ids:Array(String)})
