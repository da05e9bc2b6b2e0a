-- queries.findings.retry_amplification.retried_timeouts: which hops retried attempts that had timed out?
with {{attempts}},
sequenced as (
    select
        *,
        lead(attempt) over (
            partition by trace_id, parent_span_id, hop_kind, hop_name, call_id
            order by attempt, start_ns
        ) as next_attempt
    from attempts
),
retried as (
    -- a timed-out attempt that another attempt of the same call followed
    select *
    from sequenced
    where error_type = 'timeout' and next_attempt is not null
)
select
    hop_kind, hop_name,
    count(*) as retried_timeouts,
    count(distinct task_id) as tasks,
    max(hop_timeout_ms) as timeout_ms,
    sum(duration_ms) as time_in_retried_timeouts_ms,
    arg_max({'task_id': task_id, 'span_id': span_id}, duration_ms, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from retried
group by hop_kind, hop_name
having count(*) >= $retried_timeouts_min
order by retried_timeouts desc
