-- snippet `model_call_steps` (CTEs recent_tasks, model_calls, per_task, task_models) of
-- _evidence_growing_contexts.sql: per task with a model call that ended in [lo_ns, hi_ns), its
-- model calls (among those that started from reach_ns to reach_end_ns) in start order summed
-- up: how often the prompt grew or shrank, whether calls overlapped, the first and last call's
-- input tokens and latency, the latency slope per 1k tokens; end_ns is its last model call's
-- end; and its most used model. DuckDB's _model_call_steps.sql, step for step.
recent_tasks as (
    select distinct task_id
    from {{finding_spans}}
    where end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
      and hop_kind = 'model' and input_tokens is not null
),
model_calls as (
    select
        task_id, span_id, hop_name, start_ns, end_ns, duration_ms,
        assumeNotNull(input_tokens) as tokens, error_type,
        lagInFrame(toNullable(tokens)) over w as prev_tokens,
        lagInFrame(toNullable(end_ns)) over w as prev_end_ns
    from {{finding_spans}}
    where task_id in (select task_id from recent_tasks)
      and hop_kind = 'model' and input_tokens is not null
      and start_ns >= {reach_ns:Int64} and start_ns < {reach_end_ns:Int64}
    window w as (partition by task_id order by start_ns
                 rows between unbounded preceding and current row)
),
per_task as (
    select
        task_id,
        count() as calls,
        countIf(tokens > prev_tokens) as growing_steps,
        countIf(tokens < prev_tokens) as shrinking_steps,
        countIf(start_ns < prev_end_ns - {clock_slack_ns:Int64}) as overlapping_calls,
        argMin(tokens, start_ns) as first_tokens,
        argMax(tokens, start_ns) as final_tokens,
        argMin(duration_ms, start_ns) as first_ms,
        argMax(duration_ms, start_ns) as final_ms,
        -- regr_slope: the population covariance over the variance of the prompt lengths
        covarPop(tokens, duration_ms) / nullIf(varPop(tokens), 0) * 1000 as ms_per_1k_tokens,
        argMax(span_id, start_ns) as last_span_id,
        countIf(error_type in ('timeout', 'context_overflow')) as overflows,
        max(end_ns) as last_end_ns
    from model_calls
    group by task_id
),
task_models as (
    -- each task's most used model (the greatest of equals)
    select task_id, argMax(hop_name, (n_calls, hop_name)) as model
    from (select task_id, hop_name, count() as n_calls from model_calls
          group by task_id, hop_name)
    group by task_id
)
