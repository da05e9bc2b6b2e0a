-- queries.hops.hop_stats: how is each hop doing over the spans that ended in the window?
with {{raw_spans}}, {{hop_rows}}, {{hop_hist}},
per_hop as (
    -- columns read as w.*: unqualified names would be this select's own aliases
    select (w.hop_kind, w.hop_name) as grp, sum(w.calls) as calls,
        sum(w.logical_calls) as logical_calls, sum(w.errors) as errors,
        sum(w.timeouts) as timeouts, sum(w.rate_limited) as rate_limited,
        sum(w.circuit_open) as circuit_open, sum(w.input_tokens) as input_tokens,
        sum(w.output_tokens) as output_tokens
    from hop_rows as w
    group by grp
    having sum(w.calls) > 0
),
hist as (
    select (h.hop_kind, h.hop_name) as grp, h.metric as metric, h.bucket as bucket,
        sum(h.count) as count
    from hop_hist as h
    group by grp, metric, bucket
),
probs as (
    select *
    from values('p_metric String, label String, q Float64',
                ('latency_ms', 'latency_p50_ms', 0.5), ('latency_ms', 'latency_p95_ms', 0.95),
                ('latency_ms', 'latency_p99_ms', 0.99), ('ttft_ms', 'ttft_p50_ms', 0.5),
                ('ttft_ms', 'ttft_p95_ms', 0.95))
),
{{hist_quantiles}},
valued as (
    select grp,
        maxIfOrNull(value, label = 'latency_p50_ms') as latency_p50_ms,
        maxIfOrNull(value, label = 'latency_p95_ms') as latency_p95_ms,
        maxIfOrNull(value, label = 'latency_p99_ms') as latency_p99_ms,
        maxIfOrNull(value, label = 'ttft_p50_ms') as ttft_p50_ms,  -- null without streaming
        maxIfOrNull(value, label = 'ttft_p95_ms') as ttft_p95_ms
    from quantiles
    group by grp
)
select
    p.grp.1 as hop_kind, p.grp.2 as hop_name, p.calls as calls,
    p.logical_calls as logical_calls,
    p.calls / nullIf(p.logical_calls, 0) as attempts_per_call,
    p.errors as errors, p.errors / p.calls as error_rate,
    p.timeouts as timeouts, p.timeouts / p.calls as timeout_rate,
    p.rate_limited as rate_limited, p.rate_limited / p.calls as rate_limited_rate,
    p.circuit_open as circuit_open, p.circuit_open / p.calls as circuit_open_rate,
    v.latency_p50_ms as latency_p50_ms, v.latency_p95_ms as latency_p95_ms,
    v.latency_p99_ms as latency_p99_ms, v.ttft_p50_ms as ttft_p50_ms,
    v.ttft_p95_ms as ttft_p95_ms, p.input_tokens as input_tokens,
    p.output_tokens as output_tokens
from per_hop as p
left join valued as v on v.grp = p.grp
order by errors desc, calls desc, hop_kind, hop_name
limit {limit:UInt64}
settings join_use_nulls = 1
