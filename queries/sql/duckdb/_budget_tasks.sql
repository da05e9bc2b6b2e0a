window_tasks as (
    -- finished in the window (by end), root arrived, cancelled and lost excluded
    select task_id, trace_id, root_span_id, start_ns, end_ns, duration_ms, budget_total_ms,
        span_count
    from tasks
    where finished and outcome not in ('cancelled', 'lost') and root_span_id is not null
      and end_ns >= $start_ns and end_ns < $end_ns
{{task_filters}}
)
