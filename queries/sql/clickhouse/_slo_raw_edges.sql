-- slo_counts.sql's raw tasks: finished (cancelled excluded) in a window's edge outside its
-- rollup minutes, [end_ns - window, cut) or [roll_hi, end_ns)
finished and outcome <> 'cancelled'
      and end_ns >= {end_ns:Int64} - {longest_ns:Int64} and end_ns < {end_ns:Int64}
      and (arrayExists((w, c) -> end_ns >= {end_ns:Int64} - w and end_ns < c,
                       {windows_ns:Array(Int64)}, {cuts_ns:Array(Int64)})
           or end_ns >= {roll_hi:Int64})
      and ({task_type:Nullable(String)} is null or task_type = {task_type:Nullable(String)})
