-- snippet: evidence of findings/long_calls_without_timeout for the calls without a timeout that
-- ended in [$lo_ns, $hi_ns), per minute of that end and hop. Whether a call is long depends on
-- the window's p50 of the hop, so every call's duration is kept as the exponential histogram
-- the rollups keep (vals duration_bucket, duration_count: that p50 within 1.1 %,
-- docs/rollups.md), and each call that may be long (over the lesser of missing_timeout_long_ms
-- and _floor_ms): its duration, end (ns after the minute, exact as a double), whether its task
-- went bad and that task's id (null when it did not: only bad tasks are counted, and a call of
-- a hop without a timeout is often long, so most ids would be stored for nothing), in
-- parallel lists of one order. The stored evidence is named with those thresholds
-- (queries.findings.evidence.question_id).
with untimed as (
    select task_id, span_id, hop_kind, hop_name, duration_ms, end_ns,
           end_ns // $grain_ns * $grain_ns as minute_ns, greatest(duration_ms, 0) as value,
           duration_ms > least($missing_timeout_long_ms, $missing_timeout_floor_ms) as candidate
    from spans
    where end_ns >= $lo_ns and end_ns < $hi_ns
      and hop_timeout_ms = 0
),
judged as (
    select u.*, coalesce(k.outcome in ('failed', 'budget_exhausted', 'lost'), false) as task_bad
    from untimed u
    left join (select task_id, outcome from tasks
               where start_ns >= $reach_ns and start_ns < $hi_ns) k
           on k.task_id = u.task_id and u.candidate
)
select
    minute_ns, hop_kind, hop_name,
    map {'calls': count(*), 'candidates': count(*) filter (where candidate)}::MAP(VARCHAR, DOUBLE)
        as n,
    map {'duration_bucket': map_keys(histogram({{hist_bucket}})),
         'duration_count': map_values(histogram({{hist_bucket}})),
         'long_ms': list(duration_ms order by duration_ms, end_ns, span_id)
                        filter (where candidate),
         'end_off_ns': list(end_ns - minute_ns order by duration_ms, end_ns, span_id)
                           filter (where candidate),
         'bad': list(task_bad::INTEGER order by duration_ms, end_ns, span_id)
                    filter (where candidate)}::MAP(VARCHAR, DOUBLE[]) as vals,
    list(case when task_bad then task_id end order by duration_ms, end_ns, span_id)
        filter (where candidate) as task_ids,
    arg_max({'task_id': task_id, 'span_id': span_id, 'rank': duration_ms},
            {'r': duration_ms, 't': task_id, 's': span_id}, 5) filter (where candidate)
        as examples
from judged
group by all
