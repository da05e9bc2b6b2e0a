-- queries.hops.hop_series: the busiest hops, bucket by bucket of step_ns (a span falls in the
-- bucket holding its end). Over hop_spans (no hop rollups on ClickHouse yet).
with {{window_spans}},
per_bucket as (
    -- columns read as w.*: unqualified names would be this select's own aliases
    select w.grp as grp, count() as calls,
        countIf(coalesce(w.is_error, false)) as errors,
        countIf(coalesce(w.error_type = 'timeout', false)) as timeouts,
        countIf(coalesce(w.error_type = 'rate_limited', false)) as rate_limited
    from window_spans as w
    group by w.grp
),
hist as (
    select grp, 'latency_ms' as metric, {{hist_bucket}} as bucket, count() as count
    from (select grp, duration_ms as value from window_spans)
    where value is not null
    group by grp, metric, bucket
),
probs as (
    select * from values('p_metric String, label String, q Float64',
                         ('latency_ms', 'latency_p95_ms', 0.95))
),
{{hist_quantiles}},
ranked as (
    -- hops ranked by their calls over the whole window (ties: kind, name)
    select *, dense_rank() over (order by hop_calls desc, grp.2, grp.3) as hop_rank
    from (select *, sum(calls) over (partition by grp.2, grp.3) as hop_calls from per_bucket)
)
select r.grp.1 as bucket_ns, r.grp.2 as hop_kind, r.grp.3 as hop_name, r.calls as calls,
    r.errors / r.calls as error_rate,
    r.timeouts / r.calls as timeout_rate,
    r.rate_limited / r.calls as rate_limited_rate,
    q.value as latency_p95_ms
from ranked as r
left join quantiles as q on q.grp = r.grp
where r.hop_rank <= {limit:UInt64}
order by bucket_ns, r.hop_rank
settings join_use_nulls = 1
