-- queries.metrics: exemplars among the spans that ended in [start_ns, end_ns), per hop: the
-- latest failed call (trace id, end) and the slowest call (trace id, duration, end)
select hop_kind, hop_name,
    arg_max(trace_id, end_ns) filter (where is_error) as error_trace_id,
    max(end_ns) filter (where is_error) as error_end_ns,
    arg_max(error_type, end_ns) filter (where is_error) as error_type,
    arg_max(trace_id, duration_ms) as slow_trace_id, max(duration_ms) as slow_ms,
    arg_max(end_ns, duration_ms) as slow_end_ns
from spans
where end_ns >= $start_ns and end_ns < $end_ns
group by hop_kind, hop_name
