-- queries.metrics: calls, logical calls, retries, errors (and the timeouts, rate limits and open
-- circuits among them) and tokens of the spans that ended in [start_ns, end_ns) per hop. Over the
-- materialized spans (hop_spans); a logical call counts at its first attempt
-- and a retry is an attempt above 0, as in collector/store/rollups.py.
select w.hop_kind as hop_kind, w.hop_name as hop_name, count() as calls,
    countIf(coalesce(w.attempt, w.retry_attempt, 0) > 0) as retries,
    {{hop_call_counts}}
from hop_spans as w
where w.end_ns >= {start_ns:Int64} and w.end_ns < {end_ns:Int64}
group by w.hop_kind, w.hop_name
