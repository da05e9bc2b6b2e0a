hop_hist as (
    -- hop latency (latency_ms) and time to first token (ttft_ms) as histogram buckets at t_ns
    select minute_ns as t_ns, hop_kind, hop_name, metric, bucket, count
    from hop_histograms_tiers
    where {{tier_range}}
      and ($hop_kind is null or hop_kind = $hop_kind)
    union all
    select t_ns, hop_kind, hop_name, metric, {{hist_bucket}} as bucket, 1 as count
    from (
        select end_ns as t_ns, hop_kind, hop_name, 'latency_ms' as metric, duration_ms as value
        from raw_spans
        union all
        select end_ns, hop_kind, hop_name, 'ttft_ms', ttft_ms
        from raw_spans
    )
    where value is not null
)
