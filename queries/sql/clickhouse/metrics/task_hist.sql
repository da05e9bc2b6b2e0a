-- queries.metrics: task duration (latency_ms) and budget use (budget_used) of the tasks of
-- whole minutes [roll_lo, roll_hi), per task type, as exponential-histogram bucket counts
-- and sums (sum_e6: millionths of the exposed unit, rollups.HISTOGRAM_VALUES), from
-- task_histograms and its hour tier, summed over shards
select r.task_type as task_type, r.metric as metric, r.bucket as bucket, sum(r.count) as count,
    sum(r.sum_e6) as sum_e6
from {{rollup_tiers(task_histograms)}} as r
group by r.task_type, r.metric, r.bucket
having sum(r.count) <> 0
