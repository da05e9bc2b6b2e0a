-- snippet `model_call_steps` (CTEs recent_tasks, model_calls, per_task, task_models) of
-- _evidence_growing_contexts.sql: per task with a model call that ended in [$lo_ns, $hi_ns),
-- its model calls (among those that started from $reach_ns to $reach_end_ns: a task's spans
-- start within 30 min of each other) in start order summed up: how often the prompt grew or
-- shrank, whether calls overlapped, the first and last call's input tokens and latency, the
-- latency slope per 1k tokens; end_ns is its last model call's end; and its most used model.
recent_tasks as (
    select distinct task_id
    from spans
    where end_ns >= $lo_ns and end_ns < $hi_ns
      and hop_kind = 'model' and input_tokens is not null
),
model_calls as (
    select
        s.task_id, s.span_id, s.hop_name, s.start_ns, s.end_ns, s.duration_ms, s.input_tokens,
        s.error_type,
        lag(s.input_tokens) over (partition by s.task_id order by s.start_ns) as prev_tokens,
        lag(s.end_ns) over (partition by s.task_id order by s.start_ns) as prev_end_ns
    from spans s
    semi join recent_tasks r on r.task_id = s.task_id
    where s.hop_kind = 'model' and s.input_tokens is not null
      and s.start_ns >= $reach_ns and s.start_ns < $reach_end_ns
),
per_task as (
    select
        task_id,
        count(*) as calls,
        count(*) filter (where input_tokens > prev_tokens) as growing_steps,
        count(*) filter (where input_tokens < prev_tokens) as shrinking_steps,
        count(*) filter (where start_ns < prev_end_ns - $clock_slack_ns) as overlapping_calls,
        arg_min(input_tokens, start_ns) as first_tokens,
        arg_max(input_tokens, start_ns) as final_tokens,
        arg_min(duration_ms, start_ns) as first_ms,
        arg_max(duration_ms, start_ns) as final_ms,
        regr_slope(duration_ms, input_tokens) * 1000 as ms_per_1k_tokens,
        arg_max(span_id, start_ns) as last_span_id,
        count(*) filter (where error_type in ('timeout', 'context_overflow')) as overflows,
        max(end_ns) as end_ns
    from model_calls
    group by task_id
),
task_models as (
    -- each task's most used model (the greatest of equals)
    select task_id, arg_max(hop_name, {'n': calls, 'v': hop_name}) as model
    from (select task_id, hop_name, count(*) as calls from model_calls group by all)
    group by task_id
)
