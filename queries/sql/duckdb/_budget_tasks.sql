budget_tasks as (
    -- /budget's tasks of the window outside the rollups' whole minutes [$roll_lo, $roll_hi)
    -- (the whole window when asked over raw rows): finished (by end), root arrived, cancelled
    -- and lost excluded (collector/store/rollups.py BUDGET); one constant range filter each
    select *
    from tasks
    where finished and outcome not in ('cancelled', 'lost') and root_span_id is not null
      and (end_ns >= $start_ns and end_ns < $roll_lo or end_ns >= $roll_hi and end_ns < $end_ns)
{{task_filters}}
)
