-- queries.findings.scope.task_scope: the tasks asked about (by task id, or holding a trace),
-- their traces, and when their judged spans ran (DuckDB's scope_task, scope_spans and
-- scope_bounds in one question: the scope reaches the findings as snippets, not temporary
-- tables). A task a materializer pass has not judged yet is in neither `tasks` nor
-- finding_spans: no task (the caller's 404 says why)
with asked as (
    select task_id
    from tasks
    where task_id = {task_id:Nullable(String)}
       or task_id in (select task_id from finding_spans
                      where trace_id = {trace_id:Nullable(String)})
),
traces as (
    select distinct trace_id
    from agentsla_task_traces final
    where task_id in (select task_id from asked)
)
select
    (select groupArray(task_id) from asked) as task_ids,
    (select groupArray(trace_id) from traces) as trace_ids,
    minOrNull(start_ns) as start_ns,
    maxOrNull(end_ns) as end_ns
from finding_spans
where trace_id in (select trace_id from traces)
  and task_id in (select task_id from asked)
