-- queries.tasks.get_task: the same spans, read only where they can start: DuckDB's zone maps
-- on start_ns skip the row groups (appended in arrival order) outside [lo_ns, hi_ns].
-- `expected_spans` is the task's span_count read in the same statement (same snapshot).
select *, (select span_count from tasks where task_id = $task_id) as expected_spans
from spans
where task_id = $task_id and start_ns >= $lo_ns and start_ns <= $hi_ns
order by start_ns, span_id
limit $limit
