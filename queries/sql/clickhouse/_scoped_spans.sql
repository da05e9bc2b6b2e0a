-- queries.findings.scope: the scoped tasks' spans, as DuckDB's scope_spans table holds them:
-- read by their traces (the table's bloom filter) within the scope's span times (its key)
(select * from finding_spans
 where end_ns >= {scope_start_ns:Int64} and end_ns <= {scope_end_ns:Int64}
   and trace_id in {scope_trace_ids:Array(String)}
   and task_id in {scope_task_ids:Array(String)})
