-- snippet: evidence of findings/long_calls_without_timeout for the calls without a timeout
-- (hop_timeout_ms = 0) that ended in [lo_ns, hi_ns), per minute of that end and hop (DuckDB's
-- twin). Whether a call is long depends on the window's p50 of the hop, so every call's
-- duration is kept as histogram buckets (vals duration_bucket/_count), and each call that may
-- be long (over the lesser of missing_timeout_long_ms and _floor_ms): its duration, end (ns
-- after the minute, exact as a double), whether its task went bad (tasks read among those that
-- started from reach_ns) and that task's id ('' when it did not: only bad tasks are counted),
-- in parallel lists of one order.
with untimed as (
    select task_id, span_id, hop_kind, hop_name, duration_ms, end_ns,
           intDiv(end_ns, 60000000000) * 60000000000 as minute_ns,
           greatest(duration_ms, 0) as value,
           duration_ms > least({missing_timeout_long_ms:Float64},
                               {missing_timeout_floor_ms:Float64}) as candidate
    from {{finding_spans}}
    where end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
      and hop_timeout_ms = 0
),
judged as (
    select u.*, toFloat64({{hist_bucket}}) as bucket,
           u.candidate and coalesce(k.outcome in ('failed', 'budget_exhausted', 'lost'), false)
               as task_bad,
           (u.duration_ms, toFloat64(u.end_ns - u.minute_ns), u.span_id, u.task_id,
            toFloat64(task_bad)) as long_call,
           (u.duration_ms, u.task_id, u.span_id) as ex
    from untimed as u
    left join (select task_id, outcome from {{finding_tasks}}
               where start_ns >= {reach_ns:Int64} and start_ns < {hi_ns:Int64}) as k
           on k.task_id = u.task_id
)
select * except (durations, long_calls)
from (
    select
        minute_ns, hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type,
        CAST(NULL, 'Nullable(String)') as label,
        map('calls', toFloat64(count()), 'candidates', toFloat64(countIf(candidate))) as n,
        sumMap([bucket], [1.0]) as durations,
        arraySort(groupArrayIf(long_call, candidate)) as long_calls,
        map('duration_bucket', durations.1, 'duration_count', durations.2,
            'long_ms', arrayMap(x -> x.1, long_calls),
            'end_off_ns', arrayMap(x -> x.2, long_calls),
            'bad', arrayMap(x -> x.5, long_calls)) as vals,
        arrayMap(x -> if(x.5 = 1, x.4, ''), long_calls) as task_ids,
        arraySlice(arrayReverseSort(groupArrayIf(ex, candidate)), 1, 5) as examples,
        CAST(NULL, 'Nullable(Int64)') as first_ns,
        CAST(NULL, 'Nullable(Int64)') as last_ns
    from judged
    group by minute_ns, hop_kind, hop_name
)
settings join_use_nulls = 1
