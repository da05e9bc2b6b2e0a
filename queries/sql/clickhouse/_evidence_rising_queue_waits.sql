-- snippet: evidence of findings/rising_queue_waits for the queue waits that ended in
-- [lo_ns, hi_ns), per minute of their end and hop (DuckDB's twin): how many and the longest,
-- the histogram buckets of their durations and of their tasks' budgets (vals wait_bucket/_count,
-- budget_bucket/_count), and each wait's second of the minute with its two buckets (vals
-- second, second_wait_bucket, second_budget_bucket, in one order; NaN: a task without a
-- budget), which the verdict reads when a quarter's boundary second cuts the minute. The
-- examples are the waits among the five longest of those that ended in their second or later
-- (vals example_second: their seconds, in the examples' order): the five longest of any late
-- part of the minute are among them. Tasks are read among those that started from reach_ns.
with waits as (
    select s.task_id as task_id, s.span_id as span_id, s.hop_kind as hop_kind,
           s.hop_name as hop_name, s.duration_ms as duration_ms, s.end_ns as end_ns,
           t.budget_total_ms as budget_total_ms,
           intDiv(s.end_ns, 60000000000) * 60000000000 as minute_ns,
           intDiv(s.end_ns - minute_ns, 1000000000) as second,
           greatest(s.duration_ms, 0) as value, toFloat64({{hist_bucket}}) as wait_bucket,
           (s.duration_ms, s.task_id, s.span_id) as ex
    from {{finding_spans}} as s
    left join (select task_id, budget_total_ms from {{finding_tasks}}
               where start_ns >= {reach_ns:Int64} and start_ns < {hi_ns:Int64}) as t
           on t.task_id = s.task_id
    where s.end_ns >= {lo_ns:Int64} and s.end_ns < {hi_ns:Int64}
      and s.hop_kind = 'queue'
),
buckets as (
    select * except value,
           if(budget_total_ms is null, nan, toFloat64({{hist_bucket}})) as budget_bucket,
           -- the five longest of the waits that ended in this wait's second of the minute or later
           has(arraySlice(arrayReverseSort(groupArray(ex) over (
                   partition by minute_ns, hop_kind, hop_name order by second desc
                   range between unbounded preceding and current row)), 1, 5), ex) as example
    from (select *, greatest(coalesce(budget_total_ms, 0), 0) as value from waits)
)
select * except (waits_hist, budgets_hist, in_order, flagged)
from (
    select
        minute_ns, hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type,
        CAST(NULL, 'Nullable(String)') as label, CAST([], 'Array(String)') as task_ids,
        map('waits', toFloat64(count()), 'max_wait_ms', max(duration_ms)) as n,
        sumMap([wait_bucket], [1.0]) as waits_hist,
        sumMapIf([budget_bucket], [1.0], not isNaN(budget_bucket)) as budgets_hist,
        arraySort(groupArray((end_ns, task_id, span_id, toFloat64(second), wait_bucket,
                              budget_bucket, duration_ms, example))) as in_order,
        arrayFilter(w -> w.8, in_order) as flagged,
        map('wait_bucket', waits_hist.1, 'wait_count', waits_hist.2,
            'budget_bucket', budgets_hist.1, 'budget_count', budgets_hist.2,
            'second', arrayMap(w -> w.4, in_order),
            'second_wait_bucket', arrayMap(w -> w.5, in_order),
            'second_budget_bucket', arrayMap(w -> w.6, in_order),
            'example_second', arrayMap(w -> w.4, flagged)) as vals,
        arrayMap(w -> (w.7, w.2, w.3), flagged) as examples,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from buckets
    group by minute_ns, hop_kind, hop_name
)
settings join_use_nulls = 1
