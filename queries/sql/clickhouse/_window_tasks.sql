window_tasks as (
    -- the window's tasks (list_tasks): a finished one by its end, one in progress by its start
    select *
    from tasks
    where (finished and end_ns >= {start_ns:Int64} and end_ns < {end_ns:Int64}
           or not finished and start_ns >= {start_ns:Int64} and start_ns < {end_ns:Int64})
{{task_filters}}
)
