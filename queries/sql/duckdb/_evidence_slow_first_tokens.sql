-- snippet: evidence of findings/slow_first_tokens for the streamed model calls that ended in
-- [$lo_ns, $hi_ns), per minute of that end and hop; the calls' ttft_ms as the exponential
-- histogram the rollups keep (vals ttft_bucket, ttft_count: the window's p50 and p95 within
-- 1.1 %, docs/rollups.md). Which calls stalled depends on stream_stall_ttft_ms (the stored
-- evidence is named with it: queries.findings.evidence.question_id).
with streamed as (
    select task_id, span_id, hop_kind, hop_name, ttft_ms, error_type, end_ns,
           ttft_ms > $stream_stall_ttft_ms as stalled, greatest(ttft_ms, 0) as value
    from spans
    where end_ns >= $lo_ns and end_ns < $hi_ns
      and hop_kind = 'model' and ttft_ms is not null
)
select
    end_ns // $grain_ns * $grain_ns as minute_ns,
    hop_kind, hop_name,
    map {'streamed_calls': count(*), 'stalled_calls': count(*) filter (where stalled),
         'ttft_max_ms': max(ttft_ms),
         'stalled_then_timed_out': count(*) filter (where stalled and error_type = 'timeout')
        }::MAP(VARCHAR, DOUBLE) as n,
    map {'ttft_bucket': map_keys(histogram({{hist_bucket}})),
         'ttft_count': map_values(histogram({{hist_bucket}}))}::MAP(VARCHAR, DOUBLE[]) as vals,
    arg_max({'task_id': task_id, 'span_id': span_id, 'rank': ttft_ms},
            {'r': ttft_ms, 't': task_id, 's': span_id}, 5) filter (where stalled) as examples,
    min(end_ns) filter (where stalled) as first_ns,
    max(end_ns) filter (where stalled) as last_ns
from streamed
group by all
