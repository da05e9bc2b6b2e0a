-- queries.hops.hop_series: the busiest hops, bucket by bucket of $step_ns (a span falls in
-- the bucket holding its end)
with {{raw_spans}}, {{hop_rows}}, {{hop_hist}},
per_bucket as (
    select
        $start_ns + (t_ns - $start_ns) // $step_ns * $step_ns as bucket_ns,
        hop_kind, hop_name, sum(calls) as calls, sum(errors) as errors,
        sum(timeouts) as timeouts, sum(rate_limited) as rate_limited
    from hop_rows
    group by all
    having sum(calls) > 0
),
hist as (
    select $start_ns + (t_ns - $start_ns) // $step_ns * $step_ns as bucket_ns,
        hop_kind, hop_name, metric, bucket, count
    from hop_hist
    where metric = 'latency_ms'
),
probs as (
    select 'latency_ms' as p_metric, 'latency_p95_ms' as label, 0.95 as q
),
{{hist_quantiles}},
ranked as (
    -- hops ranked by their calls over the whole window (ties: kind, name)
    select *, dense_rank() over (order by hop_calls desc, hop_kind, hop_name) as hop_rank
    from (select *, sum(calls) over (partition by hop_kind, hop_name) as hop_calls
          from per_bucket)
)
select r.bucket_ns, r.hop_kind, r.hop_name, r.calls,
    r.errors / r.calls as error_rate,
    r.timeouts / r.calls as timeout_rate,
    r.rate_limited / r.calls as rate_limited_rate,
    q.value as latency_p95_ms
from ranked r
left join quantiles q on q.bucket_ns = r.bucket_ns
                     and q.hop_kind is not distinct from r.hop_kind
                     and q.hop_name is not distinct from r.hop_name
where r.hop_rank <= $limit
order by r.bucket_ns, r.hop_rank
