-- snippet: evidence of findings/retried_timeouts for the logical calls whose last attempt
-- ended in [$lo_ns, $hi_ns), per minute of that end and hop (attempts read from
-- [$start_ns, $end_ns), the range widened by the calls' slack)
with {{attempts}},
sequenced as (
    select
        *,
        lead(attempt) over (
            partition by trace_id, parent_span_id, hop_kind, hop_name, call_id
            order by attempt, start_ns
        ) as next_attempt,
        max(end_ns) over (partition by trace_id, parent_span_id, hop_kind, hop_name, call_id)
            as call_end_ns
    from attempts
),
retried as (
    -- a timed-out attempt that another attempt of the same call followed
    select *
    from sequenced
    where error_type = 'timeout' and next_attempt is not null
      and call_end_ns >= $lo_ns and call_end_ns < $hi_ns
)
select
    call_end_ns // $grain_ns * $grain_ns as minute_ns,
    hop_kind, hop_name,
    map {'retried_timeouts': count(*), 'timeout_ms': max(hop_timeout_ms),
         'time_ms': sum(duration_ms)}::MAP(VARCHAR, DOUBLE) as n,
    list(distinct task_id) as task_ids,
    arg_max({'task_id': task_id, 'span_id': span_id, 'rank': duration_ms},
            {'r': duration_ms, 't': task_id, 's': span_id}, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from retried
group by all
