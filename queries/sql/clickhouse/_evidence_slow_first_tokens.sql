-- snippet: evidence of findings/slow_first_tokens for the streamed model calls that ended in
-- [lo_ns, hi_ns), per minute of that end and hop; every call's ttft_ms is kept (vals): the verdict
-- takes the window's p50 and p95 from their exponential histogram (DuckDB's twin)
with streamed as (
    select task_id, span_id, hop_kind, hop_name, assumeNotNull(ttft_ms) as ttft, error_type,
           end_ns, ttft > {stream_stall_ttft_ms:Float64} as stalled, (ttft, task_id, span_id) as ex
    from {{finding_spans}}
    where end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
      and hop_kind = 'model' and ttft_ms is not null
)
select
    intDiv(end_ns, 60000000000) * 60000000000 as minute_ns,
    hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type,
    CAST(NULL, 'Nullable(String)') as label,
    CAST([], 'Array(String)') as task_ids,
    map('streamed_calls', toFloat64(count()), 'stalled_calls', toFloat64(countIf(stalled)),
        'ttft_max_ms', max(ttft),
        'stalled_then_timed_out', toFloat64(countIf(stalled and error_type = 'timeout'))) as n,
    map('ttft_ms', groupArray(ttft)) as vals,
    arraySlice(arrayReverseSort(groupArrayIf(ex, stalled)), 1, 5) as examples,
    minIfOrNull(end_ns, stalled) as first_ns,
    maxIfOrNull(end_ns, stalled) as last_ns
from streamed
group by minute_ns, hop_kind, hop_name
