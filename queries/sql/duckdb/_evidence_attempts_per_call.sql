-- snippet: evidence of findings/attempts_per_call for the logical calls whose last attempt
-- ended in [$lo_ns, $hi_ns), per minute of that end and hop (attempts read from
-- [$start_ns, $end_ns), the range widened by the calls' slack)
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
    end_ns // $grain_ns * $grain_ns as minute_ns,
    hop_kind, hop_name,
    map {'calls': count(*), 'attempts': sum(attempts), 'max_attempts': max(attempts),
         'retried_calls': count(*) filter (where attempts > 1)}::MAP(VARCHAR, DOUBLE) as n,
    arg_max({'task_id': task_id, 'span_id': last_span_id, 'rank': attempts},
            {'r': attempts, 't': task_id, 's': last_span_id}, 5) as examples,
    min(end_ns) filter (where attempts > 1) as first_ns,
    max(end_ns) filter (where attempts > 1) as last_ns
from calls
where end_ns >= $lo_ns and end_ns < $hi_ns
group by all
