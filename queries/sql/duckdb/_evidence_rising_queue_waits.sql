-- snippet: evidence of findings/rising_queue_waits for the queue waits that ended in
-- [$lo_ns, $hi_ns), per minute of their end and hop: how many and the longest, the exponential
-- histograms the rollups keep (docs/rollups.md) of their durations and of their tasks' budgets
-- (vals wait_bucket/wait_count, budget_bucket/budget_count: the verdict's p90s and median
-- budget within 1.1 %), and each wait's second of the minute with its two buckets (vals
-- second, second_wait_bucket, second_budget_bucket, in one order), which the verdict reads
-- when a quarter's boundary second cuts the minute. The examples are the waits among the five
-- longest of those that ended in their second or later (vals example_second: their seconds, in
-- the examples' order): the five longest of any late part of the minute are among them, and so
-- are the minute's own five longest. Tasks are read among those that started from $reach_ns.
with waits as (
    select s.task_id, s.span_id, s.hop_kind, s.hop_name, s.duration_ms, s.end_ns,
           t.budget_total_ms, greatest(s.duration_ms, 0) as value,
           s.end_ns // $grain_ns * $grain_ns as minute_ns
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
    select *, {{hist_bucket}} as budget_bucket, (end_ns - minute_ns) // 1000000000 as second,
           -- the five longest of the waits that ended in this wait's second of the minute or later
           arg_max({'t': task_id, 's': span_id}, {'r': duration_ms, 't': task_id, 's': span_id}, 5)
               over (partition by minute_ns, hop_kind, hop_name order by second desc
                     range between unbounded preceding and current row) as longest_from
    from wait_buckets
),
flagged as (
    select * exclude (longest_from),
           list_contains(longest_from, {'t': task_id, 's': span_id}) as example
    from buckets
)
select
    minute_ns, hop_kind, hop_name,
    map {'waits': count(*), 'max_wait_ms': max(duration_ms)}::MAP(VARCHAR, DOUBLE) as n,
    map {'wait_bucket': map_keys(histogram(wait_bucket)),
         'wait_count': map_values(histogram(wait_bucket)),
         'budget_bucket': map_keys(histogram(budget_bucket)),
         'budget_count': map_values(histogram(budget_bucket)),
         'second': list(second order by end_ns, task_id, span_id),
         'second_wait_bucket': list(wait_bucket order by end_ns, task_id, span_id),
         'second_budget_bucket': list(budget_bucket order by end_ns, task_id, span_id),
         'example_second': list(second order by end_ns, task_id, span_id) filter (where example)
        }::MAP(VARCHAR, DOUBLE[]) as vals,
    list({'task_id': task_id, 'span_id': span_id, 'rank': duration_ms}
         order by end_ns, task_id, span_id) filter (where example) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from flagged
group by all
