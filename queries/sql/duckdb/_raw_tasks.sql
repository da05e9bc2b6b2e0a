raw_tasks as (
    -- tasks of the window outside the rollups' whole minutes [$roll_lo, $roll_hi) (the whole
    -- window when asked over raw rows): a finished task by its end, one in progress by its start
    select *, case when finished then end_ns else start_ns end as t_ns
    from tasks
    where ((finished and (end_ns >= $start_ns and end_ns < $roll_lo
                          or end_ns >= $roll_hi and end_ns < $end_ns))
        or (not finished and (start_ns >= $start_ns and start_ns < $roll_lo
                              or start_ns >= $roll_hi and start_ns < $end_ns)))
{{task_filters}}
)
