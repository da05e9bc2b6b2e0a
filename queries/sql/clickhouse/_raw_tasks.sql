raw_tasks as (
    -- tasks of the window outside the rollups' whole minutes [roll_lo, roll_hi) (the whole
    -- window when asked over raw rows): a finished task by its end, one in progress by its
    -- start (t_ns). The edges are minutes of the tasks by minute (minute_tasks: each task
    -- row at the minute it counts in, so a range read); a window asked over raw rows reads
    -- `tasks` itself, a plain scan. One of the two branches has a constant false condition,
    -- which ClickHouse skips.
    select * except (minute_ns, shard), if(finished, end_ns, start_ns) as t_ns
    from minute_tasks
    where {roll_lo:Int64} < {roll_hi:Int64}
      and (minute_ns >= intDiv({start_ns:Int64}, 60000000000) * 60000000000
           and minute_ns < {roll_lo:Int64}
           or minute_ns >= {roll_hi:Int64} and minute_ns < {end_ns:Int64})
      and (t_ns >= {start_ns:Int64} and t_ns < {roll_lo:Int64}
           or t_ns >= {roll_hi:Int64} and t_ns < {end_ns:Int64})
{{task_filters}}
    union all
    select *, if(finished, end_ns, start_ns) as t_ns
    from tasks
    where {roll_lo:Int64} >= {roll_hi:Int64}
      and t_ns >= {start_ns:Int64} and t_ns < {end_ns:Int64}
{{task_filters}}
)
