-- queries.metrics: hop latency (latency_ms) and time to first token (ttft_ms) of the spans that
-- ended in [start_ns, end_ns), per hop, as exponential-histogram bucket counts and sums (sum_e6
-- in µs, rounded half up as DuckDB's round). Over the materialized spans (hop_spans; no hop
-- rollups on ClickHouse yet).
with ended as (
    select s.hop_kind as hop_kind, s.hop_name as hop_name, s.duration_ms as duration_ms,
        s.ttft_ms as ttft_ms
    from hop_spans as s
    where s.end_ns >= {start_ns:Int64} and s.end_ns < {end_ns:Int64}
)
select hop_kind, hop_name, metric, {{hist_bucket}} as bucket, count() as count,
    sum(toInt64(floor(value * 1000 + 0.5))) as sum_e6
from (
    select hop_kind, hop_name, 'latency_ms' as metric, duration_ms as value
    from ended
    union all
    select hop_kind, hop_name, 'ttft_ms', ttft_ms
    from ended
)
where value is not null
group by hop_kind, hop_name, metric, bucket
