raw_spans as (
    -- spans of the window outside the rollups' whole minutes [$roll_lo, $roll_hi), by their
    -- end; two ranges, each a constant filter DuckDB checks against its zone maps
    select s.*
    from spans s
    where s.end_ns >= $start_ns and s.end_ns < $roll_lo
      and ($hop_kind is null or s.hop_kind = $hop_kind)
{{hop_task_filter}}
    union all
    select s.*
    from spans s
    where s.end_ns >= $roll_hi and s.end_ns < $end_ns
      and ($hop_kind is null or s.hop_kind = $hop_kind)
{{hop_task_filter}}
)
