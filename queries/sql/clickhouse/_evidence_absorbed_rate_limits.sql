-- snippet: evidence of findings/absorbed_rate_limits for the logical calls whose last attempt
-- ended in [lo_ns, hi_ns), per minute of that end and hop (attempts read from
-- [start_ns, end_ns), the range widened by the calls' slack; their tasks among those that
-- started from reach_ns): counts, and the latencies of the masked and of the clean calls as
-- exponential histograms (vals masked_bucket/_count, clean_bucket/_count); DuckDB's twin
with {{attempts}},
calls as (
    select
        task_id, hop_kind, hop_name,
        countIf(error_type = 'rate_limited') as rate_limited,
        not argMax(is_error, attempt) as succeeded,
        (max(end_ns) - min(start_ns)) / 1e6 as latency_ms,
        argMax(span_id, attempt) as last_span_id,
        max(end_ns) as call_end_ns
    from attempts
    group by trace_id, parent_span_id, hop_kind, hop_name, call_id, task_id
),
judged as (
    select c.hop_kind as hop_kind, c.hop_name as hop_name, c.rate_limited as rate_limited,
           c.call_end_ns as end_ns, c.rate_limited > 0 and c.succeeded as masked,
           masked and coalesce(k.outcome in ('success', 'degraded'), false) as task_ok,
           greatest(c.latency_ms, 0) as value, toFloat64({{hist_bucket}}) as bucket,
           (c.latency_ms, c.task_id, c.last_span_id) as ex
    from calls as c
    left join (select task_id, outcome from {{finding_tasks}}
               where start_ns >= {reach_ns:Int64} and start_ns < {hi_ns:Int64}) as k
           on k.task_id = c.task_id
    where c.call_end_ns >= {lo_ns:Int64} and c.call_end_ns < {hi_ns:Int64}
)
select * except (masked_hist, clean_hist)
from (
    select
        intDiv(end_ns, 60000000000) * 60000000000 as minute_ns,
        hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type,
        CAST(NULL, 'Nullable(String)') as label,
        CAST([], 'Array(String)') as task_ids,
        map('calls', toFloat64(count()), 'masked_calls', toFloat64(countIf(masked)),
            'absorbed_429s', toFloat64(sumIf(rate_limited, masked)),
            'masked_task_ok', toFloat64(countIf(task_ok))) as n,
        sumMapIf([bucket], [1.0], masked) as masked_hist,
        sumMapIf([bucket], [1.0], rate_limited = 0) as clean_hist,
        map('masked_bucket', masked_hist.1, 'masked_count', masked_hist.2,
            'clean_bucket', clean_hist.1, 'clean_count', clean_hist.2) as vals,
        arraySlice(arrayReverseSort(groupArrayIf(ex, masked)), 1, 5) as examples,
        minIfOrNull(end_ns, masked) as first_ns,
        maxIfOrNull(end_ns, masked) as last_ns
    from judged
    group by minute_ns, hop_kind, hop_name
)
settings join_use_nulls = 1
