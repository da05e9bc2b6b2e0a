-- snippet: evidence of findings/retried_timeouts for the logical calls whose last attempt
-- ended in [lo_ns, hi_ns), per minute of that end and hop (attempts read from
-- [start_ns, end_ns), the range widened by the calls' slack); DuckDB's twin
with {{attempts}},
sequenced as (
    select
        *,
        -- the next attempt of the call (lead: none after the last)
        row_number() over w as nth,
        count() over (partition by trace_id, parent_span_id, hop_kind, hop_name, call_id)
            as of_call,
        max(end_ns) over (partition by trace_id, parent_span_id, hop_kind, hop_name, call_id)
            as call_end_ns
    from attempts
    window w as (partition by trace_id, parent_span_id, hop_kind, hop_name, call_id
                 order by attempt, start_ns)
),
retried as (
    -- a timed-out attempt that another attempt of the same call followed
    select *, (duration_ms, task_id, span_id) as ex
    from sequenced
    where error_type = 'timeout' and nth < of_call
      and call_end_ns >= {lo_ns:Int64} and call_end_ns < {hi_ns:Int64}
)
select
    intDiv(call_end_ns, 60000000000) * 60000000000 as minute_ns,
    hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type,
    CAST(NULL, 'Nullable(String)') as label,
    CAST(map(), 'Map(String, Array(Float64))') as vals,
    map('retried_timeouts', toFloat64(count()), 'timeout_ms', toFloat64(max(hop_timeout_ms)),
        'time_ms', sum(duration_ms)) as n,
    groupUniqArray(task_id) as task_ids,
    {{evidence_top5}} as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from retried
group by minute_ns, hop_kind, hop_name
