-- queries.findings.stream_stall.slow_first_tokens: which streamed models were slow to send their first token?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_slow_first_tokens.sql)
with streamed as (
    select
        hop_kind, hop_name,
        sum(n['streamed_calls'])::BIGINT as streamed_calls,
        sum(n['stalled_calls'])::BIGINT as stalled_calls,
        max(n['ttft_max_ms']) as ttft_max_ms,
        sum(n['stalled_then_timed_out'])::BIGINT as stalled_then_timed_out,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from temp.evidence_rows
    group by hop_kind, hop_name
    having sum(n['stalled_calls']) >= $stream_stall_min_calls
       and sum(n['stalled_calls']) >= $stream_stall_min_share * sum(n['streamed_calls'])
),
ttft as (
    -- the exact quantiles of every streamed call, for the hops found stalling only
    select
        r.hop_kind, r.hop_name,
        list_aggregate(flatten(list(r.vals['ttft_ms'])), 'quantile_cont', 0.5) as ttft_p50_ms,
        list_aggregate(flatten(list(r.vals['ttft_ms'])), 'quantile_cont', 0.95) as ttft_p95_ms
    from temp.evidence_rows r
    semi join streamed s on s.hop_kind is not distinct from r.hop_kind
                        and s.hop_name is not distinct from r.hop_name
    group by r.hop_kind, r.hop_name
),
examples as ({{evidence_examples}})
select
    s.hop_kind, s.hop_name,
    s.streamed_calls,
    s.stalled_calls,
    s.stalled_calls / s.streamed_calls as stalled_share,
    q.ttft_p50_ms,
    q.ttft_p95_ms,
    s.ttft_max_ms,
    s.stalled_then_timed_out,
    e.examples,
    s.first_ns,
    s.last_ns
from streamed s
join ttft q on q.hop_kind is not distinct from s.hop_kind
           and q.hop_name is not distinct from s.hop_name
left join examples e on e.hop_kind is not distinct from s.hop_kind
                    and e.hop_name is not distinct from s.hop_name
order by stalled_calls desc
