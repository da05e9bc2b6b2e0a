-- queries.metrics: hop latency (latency_ms) and time to first token (ttft_ms) of the spans of
-- whole minutes [roll_lo, roll_hi), per hop, as exponential-histogram bucket counts
-- and sums (sum_e6: millionths of the exposed unit, rollups.HISTOGRAM_VALUES)
select hop_kind, hop_name, metric, bucket, sum(count) as count, sum(sum_e6) as sum_e6
from (select * from hop_histograms_hourly where {{hourly_range}}
      union all
      select * from hop_histograms where {{minute_range}})
group by hop_kind, hop_name, metric, bucket
having sum(count) <> 0
