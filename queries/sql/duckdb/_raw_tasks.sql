raw_tasks as (
    -- tasks of the window outside the rollups' whole minutes [$roll_lo, $roll_hi) (the whole
    -- window when asked over raw rows): a finished task by its end, one in progress by its
    -- start; one branch per range, each a constant filter DuckDB checks against zone maps; only
    -- the columns task_rows and task_hist read (binding all of them cost planning time)
    select task_type, tenant_id, service_name, agent, finished, outcome, gateway_ok, duration_ms,
        budget_used_ratio, end_ns as t_ns
    from tasks
    where finished and end_ns >= $start_ns and end_ns < $roll_lo
{{task_filters}}
    union all
    select task_type, tenant_id, service_name, agent, finished, outcome, gateway_ok, duration_ms,
        budget_used_ratio, end_ns as t_ns
    from tasks
    where finished and end_ns >= $roll_hi and end_ns < $end_ns
{{task_filters}}
    union all
    select task_type, tenant_id, service_name, agent, finished, outcome, gateway_ok, duration_ms,
        budget_used_ratio, start_ns as t_ns
    from tasks
    where not finished and (start_ns >= $start_ns and start_ns < $roll_lo
                            or start_ns >= $roll_hi and start_ns < $end_ns)
{{task_filters}}
)
