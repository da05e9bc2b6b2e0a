-- queries.metrics: calls, logical calls, retries, errors (and the timeouts, rate limits and open
-- circuits among them) and tokens of the spans that ended in [start_ns, end_ns) per hop. Over the
-- spans view (no hop rollups on ClickHouse yet); a logical call counts at its first attempt
-- and a retry is an attempt above 0, as in collector/store/rollups.py.
select s.hop_kind as hop_kind, s.hop_name as hop_name, count() as calls,
    countIf(if(s.call_id is not null, s.span_id = s.call_id,
               coalesce(s.retry_attempt, 0) = 0)) as logical_calls,
    countIf(coalesce(s.attempt, s.retry_attempt, 0) > 0) as retries,
    countIf(coalesce(s.is_error, false)) as errors,
    countIf(coalesce(s.error_type = 'timeout', false)) as timeouts,
    countIf(coalesce(s.error_type = 'rate_limited', false)) as rate_limited,
    countIf(coalesce(s.error_type = 'circuit_open', false)) as circuit_open,
    sum(coalesce(s.input_tokens, 0)) as input_tokens,
    sum(coalesce(s.output_tokens, 0)) as output_tokens
from spans as s
where s.end_ns >= {start_ns:Int64} and s.end_ns < {end_ns:Int64}
group by s.hop_kind, s.hop_name
