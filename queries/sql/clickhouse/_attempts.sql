-- snippet `attempts` (CTEs range_traces, window_calls and attempts) of the finding
-- questions: call spans that ended in the window [start_ns, end_ns) of the traces with a
-- call that ended in the range [lo_ns, hi_ns) (only their calls can end there), each with
-- its logical call (`call_id`) and 0-based `attempt`, as materialization numbered them
-- (docs/tasks.md, Attempts); DuckDB's _attempts.sql. Group by (trace_id, parent_span_id,
-- hop_kind, hop_name, call_id) for one row per call. Spans not materialized yet (`call_id`
-- null) fall back to their declared numbers: in a sibling group, each first attempt
-- (`retry_attempt` null or 0) starts a call.
range_traces as (
    select distinct trace_id
    from {{finding_spans}}
    where end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64} and parent_span_id is not null
),
window_calls as (
    select
        s.task_id as task_id, s.trace_id as trace_id, s.span_id as span_id,
        s.parent_span_id as parent_span_id, s.hop_kind as hop_kind, s.hop_name as hop_name,
        s.start_ns as start_ns, s.end_ns as end_ns, s.duration_ms as duration_ms,
        s.is_error as is_error, s.error_type as error_type, s.hop_timeout_ms as hop_timeout_ms,
        s.retry_attempt as retry_attempt, s.call_id as call_id, s.attempt as attempt
    from {{finding_spans}} as s
    where s.trace_id in (select trace_id from range_traces)
      and s.end_ns >= {start_ns:Int64} and s.end_ns < {end_ns:Int64}
      and s.parent_span_id is not null
),
attempts as (
    select task_id, trace_id, span_id, parent_span_id, hop_kind, hop_name, start_ns, end_ns,
           duration_ms, is_error, error_type, hop_timeout_ms, assumeNotNull(call_id) as call_id,
           assumeNotNull(attempt) as attempt
    from window_calls
    where call_id is not null
    union all
    select task_id, trace_id, span_id, parent_span_id, hop_kind, hop_name, start_ns, end_ns,
           duration_ms, is_error, error_type, hop_timeout_ms,
           'declared-' || toString(sum(if(coalesce(retry_attempt, 0) = 0, 1, 0)) over (
               partition by trace_id, parent_span_id, hop_kind, hop_name
               order by start_ns, coalesce(retry_attempt, 0)
               rows unbounded preceding)) as call_id,
           coalesce(retry_attempt, 0) as attempt
    from window_calls
    where call_id is null
)
