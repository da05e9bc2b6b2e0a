window_tasks as (
    -- a finished task belongs to the window holding its end, one in progress to its start
    select *
    from tasks
    where ((finished and end_ns >= $start_ns and end_ns < $end_ns)
        or (not finished and start_ns >= $start_ns and start_ns < $end_ns))
{{task_filters}}
)
