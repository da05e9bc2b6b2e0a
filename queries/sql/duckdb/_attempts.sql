-- snippet `attempts` (CTEs range_traces, window_calls and attempts) of the finding
-- questions: call spans that ended in the window [$start_ns, $end_ns) of the traces with a
-- call that ended in the range [$lo_ns, $hi_ns) (only their calls can end there), each with
-- its logical call (`call_id`) and 0-based `attempt`, as materialization numbered them
-- (docs/tasks.md, Attempts). Group by (trace_id, parent_span_id, hop_kind, hop_name, call_id) for one row per
-- call. Spans not materialized yet (`call_id` null) fall back to their declared numbers: in a
-- sibling group, each first attempt (`retry_attempt` null or 0) starts a call.
range_traces as (
    select distinct trace_id
    from spans
    where end_ns >= $lo_ns and end_ns < $hi_ns and parent_span_id is not null
),
window_calls as (
    select
        s.task_id, s.trace_id, s.span_id, s.parent_span_id, s.hop_kind, s.hop_name,
        s.start_ns, s.end_ns, s.duration_ms, s.is_error, s.error_type, s.hop_timeout_ms,
        s.retry_attempt, s.call_id, s.attempt
    from spans s
    semi join range_traces r on r.trace_id = s.trace_id
    where s.end_ns >= $start_ns and s.end_ns < $end_ns
      and s.parent_span_id is not null
),
attempts as (
    select * exclude (retry_attempt)
    from window_calls
    where call_id is not null
    union all by name
    select
        * exclude (retry_attempt, call_id, attempt),
        'declared-' || sum(case when coalesce(retry_attempt, 0) = 0 then 1 else 0 end) over (
            partition by trace_id, parent_span_id, hop_kind, hop_name
            order by start_ns, coalesce(retry_attempt, 0)
            rows unbounded preceding
        ) as call_id,
        coalesce(retry_attempt, 0) as attempt
    from window_calls
    where call_id is null
)
