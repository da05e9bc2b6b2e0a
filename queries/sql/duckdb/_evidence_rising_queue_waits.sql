-- snippet: evidence of findings/rising_queue_waits for the queue waits that ended in
-- [$lo_ns, $hi_ns), per minute of their end and hop: how many and the longest, the exponential
-- histograms the rollups keep (docs/rollups.md) of their durations and of their tasks' budgets
-- (vals wait_bucket/wait_count, budget_bucket/budget_count: the verdict's p90s and median
-- budget within 1.1 %), and the minute's five longest as examples. The verdict's quarters are
-- whole minutes, so no wait is kept one by one. Tasks are read among those that started from
-- $reach_ns.
with waits as (
    select s.task_id, s.span_id, s.hop_kind, s.hop_name, s.duration_ms, s.end_ns,
           t.budget_total_ms, greatest(s.duration_ms, 0) as value
    from spans s
    left join (select * from tasks where start_ns >= $reach_ns and start_ns < $hi_ns) t
           on t.task_id = s.task_id
    where s.end_ns >= $lo_ns and s.end_ns < $hi_ns
      and s.hop_kind = 'queue'
),
wait_buckets as (
    -- (greatest skips nulls: a task without a budget stays out of the budgets' histogram)
    select * exclude (value), {{hist_bucket}} as wait_bucket,
           case when budget_total_ms is not null then greatest(budget_total_ms, 0) end as value
    from waits
),
buckets as (
    select *, {{hist_bucket}} as budget_bucket
    from wait_buckets
)
select
    end_ns // 60000000000 * 60000000000 as minute_ns,
    hop_kind, hop_name,
    map {'waits': count(*), 'max_wait_ms': max(duration_ms)}::MAP(VARCHAR, DOUBLE) as n,
    map {'wait_bucket': map_keys(histogram(wait_bucket)),
         'wait_count': map_values(histogram(wait_bucket)),
         'budget_bucket': map_keys(histogram(budget_bucket)),
         'budget_count': map_values(histogram(budget_bucket))}::MAP(VARCHAR, DOUBLE[]) as vals,
    arg_max({'task_id': task_id, 'span_id': span_id, 'rank': duration_ms},
            {'r': duration_ms, 't': task_id, 's': span_id}, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from buckets
group by all
