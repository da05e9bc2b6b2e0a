-- queries.findings.retry_amplification.attempts_per_call: which hops average too many attempts per logical call?
with {{attempts}},
calls as (
    select
        task_id, hop_kind, hop_name,
        count(*) as attempts,
        arg_max(span_id, attempt) as last_span_id,
        max(end_ns) as end_ns
    from attempts
    group by trace_id, parent_span_id, hop_kind, hop_name, call_id, task_id
)
select
    hop_kind, hop_name,
    count(*) as calls,
    sum(attempts) as attempts,
    avg(attempts) as attempts_per_call,
    max(attempts) as max_attempts,
    count(*) filter (where attempts > 1) as retried_calls,
    arg_max({'task_id': task_id, 'span_id': last_span_id}, attempts, 5) as examples,
    min(end_ns) filter (where attempts > 1) as first_ns,
    max(end_ns) filter (where attempts > 1) as last_ns
from calls
group by hop_kind, hop_name
having count(*) >= $retry_min_calls and avg(attempts) >= $retry_attempts_per_call
order by attempts_per_call desc
