-- snippet: evidence of findings/retry_storms for the attempts that ended in [$lo_ns, $hi_ns),
-- per minute of their end and hop: a storm is judged per minute, so every minute's attempts
-- and retries are kept (attempt numbers as the snippet `attempts` reads them)
with attempts as (
    select task_id, span_id, hop_kind, hop_name, end_ns,
           coalesce(attempt, retry_attempt, 0) as attempt  -- retry_attempt: not materialized yet
    from spans
    where end_ns >= $lo_ns and end_ns < $hi_ns
      and parent_span_id is not null
)
select
    end_ns // $grain_ns * $grain_ns as minute_ns,
    hop_kind, hop_name,
    map {'attempts': count(*),
         'retries': count(*) filter (where attempt > 0)}::MAP(VARCHAR, DOUBLE) as n,
    arg_max({'task_id': task_id, 'span_id': span_id, 'rank': attempt},
            {'r': attempt, 't': task_id, 's': span_id}, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from attempts
group by all
