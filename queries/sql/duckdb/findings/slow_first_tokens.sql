-- queries.findings.stream_stall.slow_first_tokens: which streamed models were slow to send their first token?
with streamed as (
    select task_id, span_id, hop_kind, hop_name, ttft_ms, error_type, end_ns,
           ttft_ms > $stream_stall_ttft_ms as stalled
    from spans
    where end_ns >= $start_ns and end_ns < $end_ns
      and hop_kind = 'model' and ttft_ms is not null
)
select
    hop_kind, hop_name,
    count(*) as streamed_calls,
    count(*) filter (where stalled) as stalled_calls,
    count(*) filter (where stalled) / count(*) as stalled_share,
    quantile_cont(ttft_ms, 0.5) as ttft_p50_ms,
    quantile_cont(ttft_ms, 0.95) as ttft_p95_ms,
    max(ttft_ms) as ttft_max_ms,
    count(*) filter (where stalled and error_type = 'timeout') as stalled_then_timed_out,
    arg_max({'task_id': task_id, 'span_id': span_id}, ttft_ms, 5)
        filter (where stalled) as examples,
    min(end_ns) filter (where stalled) as first_ns,
    max(end_ns) filter (where stalled) as last_ns
from streamed
group by hop_kind, hop_name
having count(*) filter (where stalled) >= $stream_stall_min_calls
   and count(*) filter (where stalled) >= $stream_stall_min_share * count(*)
order by stalled_calls desc
