-- queries.hops.hop_series: the busiest hops, bucket by bucket of $step_ns
with {{hop_window_spans}},
per_bucket as (
    -- one grouped pass: a span falls in the bucket holding its end
    select
        $start_ns + (end_ns - $start_ns) // $step_ns * $step_ns as bucket_ns,
        hop_kind, hop_name,
        count(*) as calls,
        count(*) filter (where is_error) as errors,
        count(*) filter (where error_type = 'timeout') as timeouts,
        count(*) filter (where error_type = 'rate_limited') as rate_limited,
        quantile_cont(duration_ms, 0.95) as latency_p95_ms
    from window_spans
    group by bucket_ns, hop_kind, hop_name
),
ranked as (
    -- hops ranked by their calls over the whole window (ties: kind, name)
    select *, dense_rank() over (order by hop_calls desc, hop_kind, hop_name) as hop_rank
    from (select *, sum(calls) over (partition by hop_kind, hop_name) as hop_calls
          from per_bucket)
)
select bucket_ns, hop_kind, hop_name, calls,
    errors / calls as error_rate,
    timeouts / calls as timeout_rate,
    rate_limited / calls as rate_limited_rate,
    latency_p95_ms
from ranked
where hop_rank <= $limit
order by bucket_ns, hop_rank
