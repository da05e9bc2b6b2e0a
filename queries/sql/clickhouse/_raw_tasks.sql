raw_tasks as (
    -- tasks of the window outside the rollups' whole minutes [roll_lo, roll_hi) (the whole
    -- window when asked over raw rows): a finished task by its end, one in progress by its
    -- start (t_ns). Found through the minute index (tasks are keyed by id, not by time), then
    -- kept where the current row counts (the index lists every minute a task was ever at)
    select *, if(finished, end_ns, start_ns) as t_ns
    from tasks
    where task_id in (
        select task_id from agentsla_task_minutes_index
        where minute_ns >= intDiv({start_ns:Int64}, 60000000000) * 60000000000
          and minute_ns < {roll_lo:Int64}
           or minute_ns >= {roll_hi:Int64} and minute_ns < {end_ns:Int64})
      and (t_ns >= {start_ns:Int64} and t_ns < {roll_lo:Int64}
           or t_ns >= {roll_hi:Int64} and t_ns < {end_ns:Int64})
{{task_filters}}
)
