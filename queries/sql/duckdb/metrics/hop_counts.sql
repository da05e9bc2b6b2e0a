-- queries.metrics: calls, logical calls, retries, errors (and the timeouts, rate limits and open
-- circuits among them) and tokens of the spans of whole minutes [roll_lo, roll_hi) per hop
select hop_kind, hop_name, sum(calls) as calls, sum(logical_calls) as logical_calls,
    sum(retries) as retries, sum(errors) as errors, sum(timeouts) as timeouts,
    sum(rate_limited) as rate_limited, sum(circuit_open) as circuit_open,
    sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens
from (select * from hop_minutes_hourly where {{hourly_range}}
      union all
      select * from hop_minutes where {{minute_range}})
group by hop_kind, hop_name
