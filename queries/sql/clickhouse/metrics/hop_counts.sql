-- queries.metrics: calls, logical calls, retries, errors (and the timeouts, rate limits and open
-- circuits among them) and tokens of the spans of whole minutes [roll_lo, roll_hi) per hop,
-- from hop_minutes and its hour tier, summed over shards
select r.hop_kind as hop_kind, r.hop_name as hop_name, sum(r.calls) as calls,
    sum(r.logical_calls) as logical_calls, sum(r.retries) as retries, sum(r.errors) as errors,
    sum(r.timeouts) as timeouts, sum(r.rate_limited) as rate_limited,
    sum(r.circuit_open) as circuit_open, sum(r.input_tokens) as input_tokens,
    sum(r.output_tokens) as output_tokens
from {{rollup_tiers(hop_minutes)}} as r
group by r.hop_kind, r.hop_name
