-- queries.metrics: hop latency (latency_ms) and time to first token (ttft_ms) of the spans of
-- whole minutes [roll_lo, roll_hi), per hop, as exponential-histogram bucket counts and sums
-- (sum_e6: millionths of the exposed unit, rollups.HISTOGRAM_VALUES), from hop_histograms and
-- its hour tier, summed over shards
select r.hop_kind as hop_kind, r.hop_name as hop_name, r.metric as metric, r.bucket as bucket,
    sum(r.count) as count, sum(r.sum_e6) as sum_e6
from {{rollup_tiers(hop_histograms)}} as r
group by r.hop_kind, r.hop_name, r.metric, r.bucket
having sum(r.count) <> 0
