-- snippet: evidence of findings/attempts_per_call for the logical calls whose last attempt
-- ended in [lo_ns, hi_ns), per minute of that end and hop (attempts read from
-- [start_ns, end_ns), the range widened by the calls' slack); DuckDB's twin, step for step
with {{attempts}},
calls as (
    select
        task_id, hop_kind, hop_name,
        count() as n_attempts,
        argMax(span_id, attempt) as last_span_id,
        max(end_ns) as call_end_ns
    from attempts
    group by trace_id, parent_span_id, hop_kind, hop_name, call_id, task_id
),
judged as (
    select *, (toFloat64(n_attempts), task_id, last_span_id) as ex
    from calls
    where call_end_ns >= {lo_ns:Int64} and call_end_ns < {hi_ns:Int64}
)
select
    intDiv(call_end_ns, 60000000000) * 60000000000 as minute_ns,
    hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type,
    CAST(NULL, 'Nullable(String)') as label,
    CAST([], 'Array(String)') as task_ids,
    CAST(map(), 'Map(String, Array(Float64))') as vals,
    map('calls', toFloat64(count()), 'attempts', toFloat64(sum(n_attempts)),
        'max_attempts', toFloat64(max(n_attempts)),
        'retried_calls', toFloat64(countIf(n_attempts > 1))) as n,
    {{evidence_top5}} as examples,
    minIfOrNull(call_end_ns, n_attempts > 1) as first_ns,
    maxIfOrNull(call_end_ns, n_attempts > 1) as last_ns
from judged
group by minute_ns, hop_kind, hop_name
