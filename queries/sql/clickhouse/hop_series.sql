-- queries.hops.hop_series: the busiest hops, bucket by bucket of step_ns (a span falls in the
-- bucket holding its end). Whole minutes from the rollups where every bucket holds whole
-- minutes (queries/rollup.py split_series), the rest from hop_spans.
with {{raw_spans}}, {{hop_rows}}, {{hop_hist}},
per_bucket as (
    -- columns read as w.*: unqualified names would be this select's own aliases
    select ({start_ns:Int64} + intDiv(w.t_ns - {start_ns:Int64}, {step_ns:Int64})
            * {step_ns:Int64}, w.hop_kind, w.hop_name) as grp,
        sum(w.calls) as calls, sum(w.errors) as errors, sum(w.timeouts) as timeouts,
        sum(w.rate_limited) as rate_limited
    from hop_rows as w
    group by grp
    having sum(w.calls) > 0
),
hist as (
    select ({start_ns:Int64} + intDiv(h.t_ns - {start_ns:Int64}, {step_ns:Int64})
            * {step_ns:Int64}, h.hop_kind, h.hop_name) as grp,
        h.metric as metric, h.bucket as bucket, sum(h.count) as count
    from hop_hist as h
    where h.metric = 'latency_ms'
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
