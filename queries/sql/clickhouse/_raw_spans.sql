raw_spans as (
    -- materialized spans of the window outside the rollups' whole minutes [roll_lo, roll_hi),
    -- by their end (hop_spans is sorted by end: two ranges of its primary key)
    select s.*
    from hop_spans as s
    where (s.end_ns >= {start_ns:Int64} and s.end_ns < {roll_lo:Int64}
           or s.end_ns >= {roll_hi:Int64} and s.end_ns < {end_ns:Int64})
      and ({hop_kind:Nullable(String)} is null or s.hop_kind = {hop_kind:Nullable(String)})
{{hop_task_filter}}
)
