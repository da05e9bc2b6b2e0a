-- queries.metrics: task duration (latency_ms) and budget use (budget_used) of the rated tasks
-- that finished in [start_ns, end_ns), per task type, as exponential-histogram bucket counts
-- and sums (the buckets and sums of DuckDB's rollups: sum_e6 in millionths of the exposed
-- unit, rounded half up as DuckDB's round). Over the tasks view (not the rollups).
with rated as (
    select t.task_type as task_type, t.duration_ms as duration_ms,
        t.budget_used_ratio as budget_used_ratio
    from tasks as t
    where t.finished and t.outcome not in ('cancelled', 'lost')
      and t.end_ns >= {start_ns:Int64} and t.end_ns < {end_ns:Int64}
)
select task_type, metric, {{hist_bucket}} as bucket, count() as count,
    sum(toInt64(floor(value * factor + 0.5))) as sum_e6
from (
    select task_type, 'latency_ms' as metric, duration_ms as value, 1000 as factor
    from rated
    union all
    select task_type, 'budget_used', budget_used_ratio, 1000000
    from rated
)
where value is not null
group by task_type, metric, bucket
