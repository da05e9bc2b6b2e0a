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
hist as (
    -- the streamed calls' ttft histogram of the hops found stalling
    select r.hop_kind, r.hop_name, 'ttft_ms' as metric,
           unnest(r.vals['ttft_bucket'])::INTEGER as bucket, unnest(r.vals['ttft_count']) as count
    from temp.evidence_rows r
    semi join streamed s on s.hop_kind is not distinct from r.hop_kind
                        and s.hop_name is not distinct from r.hop_name
),
probs as (
    select * from (values ('ttft_ms', 'p50', 0.5), ('ttft_ms', 'p95', 0.95)) p(p_metric, label, q)
),
{{hist_quantiles}},
ttft as (
    -- the p50 and p95 of every streamed call of those hops (within 1.1 %)
    select hop_kind, hop_name, max(value) filter (where label = 'p50') as ttft_p50_ms,
           max(value) filter (where label = 'p95') as ttft_p95_ms
    from quantiles
    group by hop_kind, hop_name
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
