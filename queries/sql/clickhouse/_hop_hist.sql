hop_hist as (
    -- hop latency (latency_ms) and time to first token (ttft_ms) as histogram buckets at t_ns:
    -- per whole hour or minute and shard from hop_histograms(_hourly), per span from raw_spans
    -- (both metrics from one read: an array join, not a union of two reads)
    select minute_ns as t_ns, hop_kind, hop_name, metric, bucket, count
    from {{rollup_tiers(hop_histograms)}}
    where true
      and ({hop_kind:Nullable(String)} is null or hop_kind = {hop_kind:Nullable(String)})
    union all
    select t_ns, hop_kind, hop_name, metric, {{hist_bucket}} as bucket, 1 as count
    from (select end_ns as t_ns, hop_kind, hop_name, m.1 as metric, m.2 as value
          from raw_spans
          array join [('latency_ms', toNullable(duration_ms)), ('ttft_ms', ttft_ms)] as m)
    where value is not null
)
