-- queries.findings.stream_stall.slow_first_tokens: which streamed models were slow to send their first token?
-- (the verdict over the window's evidence, _evidence_slow_first_tokens.sql, asked inline)
with evidence_rows as materialized ({{evidence_slow_first_tokens}}),
streamed as (
    select
        hop_kind, hop_name,
        toInt64(sum(n['streamed_calls'])) as n_streamed,
        toInt64(sum(n['stalled_calls'])) as n_stalled,
        max(n['ttft_max_ms']) as ttft_max,
        toInt64(sum(n['stalled_then_timed_out'])) as n_timed_out,
        -- the exact quantiles of every streamed call (ClickHouse computes them per hop anyway)
        quantileExactInclusiveArray(0.5)(vals['ttft_ms']) as p50,
        quantileExactInclusiveArray(0.95)(vals['ttft_ms']) as p95,
        minOrNull(first_ns) as first_ns,
        maxOrNull(last_ns) as last_ns
    from evidence_rows
    group by hop_kind, hop_name
    having n_stalled >= {stream_stall_min_calls:Float64}
       and n_stalled >= {stream_stall_min_share:Float64} * n_streamed
),
examples as ({{evidence_examples}})
select
    s.hop_kind as hop_kind, s.hop_name as hop_name,
    s.n_streamed as streamed_calls,
    s.n_stalled as stalled_calls,
    s.n_stalled / s.n_streamed as stalled_share,
    s.p50 as ttft_p50_ms,
    s.p95 as ttft_p95_ms,
    s.ttft_max as ttft_max_ms,
    s.n_timed_out as stalled_then_timed_out,
    e.examples as examples,
    s.first_ns as first_ns,
    s.last_ns as last_ns
from streamed as s
left join examples as e on e.hop_kind <=> s.hop_kind and e.hop_name <=> s.hop_name
order by stalled_calls desc
settings join_use_nulls = 1, enable_materialized_cte = 1
