window_spans as (
    -- a span belongs to the window holding its end
    select s.*
    from spans s
    where s.end_ns >= $start_ns and s.end_ns < $end_ns
      and ($hop_kind is null or s.hop_kind = $hop_kind)
{{hop_task_filter}}
)
