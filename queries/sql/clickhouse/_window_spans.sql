window_spans as (
    -- the materialized spans that ended in the window (hop_spans: the columns of `spans` the
    -- hop questions read), each with its group key grp: the tuple of the columns of the
    -- caller's hist_keys (hop_keys, or hop_bucket_keys for a series)
    select s.*, ({{hist_keys}}) as grp
    from hop_spans as s
    where s.end_ns >= {start_ns:Int64} and s.end_ns < {end_ns:Int64}
      and ({hop_kind:Nullable(String)} is null or s.hop_kind = {hop_kind:Nullable(String)})
{{hop_task_filter}}
)
