task_spans as (
    -- the spans of the window's tasks: every span the walk can reach has the task's id;
    -- found_spans = expected_spans (the tasks' span_count, written with the spans in one
    -- transaction) proves a bounded read left none out
    select s.task_id, s.trace_id, s.span_id, s.parent_span_id, s.hop_kind, s.start_ns, s.end_ns
    from spans s
    where s.task_id in (select task_id from window_tasks)
{{budget_span_bound}}
)
