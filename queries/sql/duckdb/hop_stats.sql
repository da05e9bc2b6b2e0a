-- queries.hops.hop_stats: how is each hop doing over the spans that ended in the window?
with {{hop_window_spans}},
sibling_calls as (
    -- one row per (trace, parent, hop): its attempts and how many logical calls they make
    select
        hop_kind, hop_name,
        count(distinct call_id)
        + case when count(*) filter (where call_id is null) > 0
               then greatest(count(*) filter (
                        where call_id is null and coalesce(retry_attempt, 0) = 0), 1)
               else 0 end as logical_calls
    from window_spans
    group by trace_id, coalesce(parent_span_id, span_id), hop_kind, hop_name
),
logical as (
    select hop_kind, hop_name, sum(logical_calls) as logical_calls
    from sibling_calls
    group by hop_kind, hop_name
),
per_hop as (
    select
        hop_kind, hop_name,
        count(*) as calls,
        count(*) filter (where is_error) as errors,
        count(*) filter (where error_type = 'timeout') as timeouts,
        count(*) filter (where error_type = 'rate_limited') as rate_limited,
        count(*) filter (where error_type = 'circuit_open') as circuit_open,
        quantile_cont(duration_ms, [0.5, 0.95, 0.99]) as latency,
        quantile_cont(ttft_ms, [0.5, 0.95]) as ttft,  -- null for hops without streaming
        coalesce(sum(input_tokens), 0) as input_tokens,
        coalesce(sum(output_tokens), 0) as output_tokens
    from window_spans
    group by hop_kind, hop_name
)
select
    p.hop_kind, p.hop_name, p.calls, l.logical_calls,
    p.calls / l.logical_calls as attempts_per_call,
    p.errors, p.errors / p.calls as error_rate,
    p.timeouts, p.timeouts / p.calls as timeout_rate,
    p.rate_limited, p.rate_limited / p.calls as rate_limited_rate,
    p.circuit_open, p.circuit_open / p.calls as circuit_open_rate,
    p.latency[1] as latency_p50_ms, p.latency[2] as latency_p95_ms, p.latency[3] as latency_p99_ms,
    p.ttft[1] as ttft_p50_ms, p.ttft[2] as ttft_p95_ms,
    p.input_tokens, p.output_tokens
from per_hop p
join logical l on l.hop_kind is not distinct from p.hop_kind
              and l.hop_name is not distinct from p.hop_name
order by p.errors desc, p.calls desc, p.hop_kind, p.hop_name
limit $limit
