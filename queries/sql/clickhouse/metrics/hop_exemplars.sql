-- queries.metrics: exemplars among the materialized spans (hop_spans) that ended in
-- [start_ns, end_ns), per hop: the latest failed call (trace id, end, reason) and the slowest
-- call (trace id, duration, end)
select s.hop_kind as hop_kind, s.hop_name as hop_name,
    argMaxIf(s.trace_id, s.end_ns, coalesce(s.is_error, false)) as error_trace_id,
    maxIfOrNull(s.end_ns, coalesce(s.is_error, false)) as error_end_ns,
    argMaxIf(s.error_type, s.end_ns, coalesce(s.is_error, false)) as error_type,
    argMax(s.trace_id, s.duration_ms) as slow_trace_id, max(s.duration_ms) as slow_ms,
    argMax(s.end_ns, s.duration_ms) as slow_end_ns
from hop_spans as s
where s.end_ns >= {start_ns:Int64} and s.end_ns < {end_ns:Int64}
group by s.hop_kind, s.hop_name
