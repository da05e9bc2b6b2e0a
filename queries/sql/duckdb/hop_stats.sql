-- queries.hops.hop_stats: how is each hop doing over the spans that ended in the window?
with {{raw_spans}}, {{hop_rows}}, {{hop_hist}},
per_hop as (
    select hop_kind, hop_name, sum(calls) as calls, sum(logical_calls) as logical_calls,
        sum(errors) as errors, sum(timeouts) as timeouts, sum(rate_limited) as rate_limited,
        sum(circuit_open) as circuit_open, sum(input_tokens) as input_tokens,
        sum(output_tokens) as output_tokens
    from hop_rows
    group by hop_kind, hop_name
    having sum(calls) > 0
),
hist as (
    select hop_kind, hop_name, metric, bucket, count
    from hop_hist
),
probs as (
    select *
    from (values ('latency_ms', 'latency_p50_ms', 0.5), ('latency_ms', 'latency_p95_ms', 0.95),
                 ('latency_ms', 'latency_p99_ms', 0.99), ('ttft_ms', 'ttft_p50_ms', 0.5),
                 ('ttft_ms', 'ttft_p95_ms', 0.95)) as p(p_metric, label, q)
),
{{hist_quantiles}},
valued as (
    select hop_kind, hop_name,
        max(value) filter (where label = 'latency_p50_ms') as latency_p50_ms,
        max(value) filter (where label = 'latency_p95_ms') as latency_p95_ms,
        max(value) filter (where label = 'latency_p99_ms') as latency_p99_ms,
        max(value) filter (where label = 'ttft_p50_ms') as ttft_p50_ms,  -- null without streaming
        max(value) filter (where label = 'ttft_p95_ms') as ttft_p95_ms
    from quantiles
    group by hop_kind, hop_name
)
select
    p.hop_kind, p.hop_name, p.calls, p.logical_calls,
    p.calls / nullif(p.logical_calls, 0) as attempts_per_call,
    p.errors, p.errors / p.calls as error_rate,
    p.timeouts, p.timeouts / p.calls as timeout_rate,
    p.rate_limited, p.rate_limited / p.calls as rate_limited_rate,
    p.circuit_open, p.circuit_open / p.calls as circuit_open_rate,
    v.latency_p50_ms, v.latency_p95_ms, v.latency_p99_ms, v.ttft_p50_ms, v.ttft_p95_ms,
    p.input_tokens, p.output_tokens
from per_hop p
left join valued v on v.hop_kind is not distinct from p.hop_kind
                  and v.hop_name is not distinct from p.hop_name
order by p.errors desc, p.calls desc, p.hop_kind, p.hop_name
limit $limit
