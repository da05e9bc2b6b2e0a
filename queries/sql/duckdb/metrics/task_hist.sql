-- queries.metrics: task duration (latency_ms) and budget use (budget_used) of the tasks of
-- whole minutes [roll_lo, roll_hi), per task type, as exponential-histogram bucket counts
-- and sums (sum_e6: millionths of the exposed unit, rollups.HISTOGRAM_VALUES)
select task_type, metric, bucket, sum(count) as count, sum(sum_e6) as sum_e6
from (select * from task_histograms_hourly where {{hourly_range}}
      union all
      select * from task_histograms where {{minute_range}})
group by task_type, metric, bucket
having sum(count) <> 0
