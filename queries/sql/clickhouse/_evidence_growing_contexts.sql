-- snippet: evidence of findings/growing_contexts: the tasks whose last model call ended in
-- [lo_ns, hi_ns) with a prompt that grew (or multiplied), one row each, with their rule, task
-- type and most used model (DuckDB's twin, which adds them up per minute, task type and rule)
with {{model_call_steps}},
classified as (
    select
        *,
        multiIf(
            growing_steps >= {context_growth_min_steps:Float64}
            and final_tokens > {context_growth_final_tokens:Float64}, 'growing_context',
            -- the short, steep kind: a conversation (no call overlaps the one before) whose
            -- prompt multiplies (geometric mean growth per call) while the model slows down
            overlapping_calls = 0 and calls >= {context_multiply_min_calls:Float64}
            and first_tokens > 0 and final_tokens >= {context_multiply_min_tokens:Float64}
            and pow(final_tokens / first_tokens, 1.0 / (calls - 1))
                >= {context_multiply_factor:Float64}
            and coalesce(final_ms >= {context_multiply_latency_factor:Float64}
                                     * nullIf(first_ms, 0), false), 'multiplying_context',
            NULL) as rule
    from per_task
    where shrinking_steps = 0
      and last_end_ns >= {lo_ns:Int64} and last_end_ns < {hi_ns:Int64}
)
select c.task_id as task_id, c.last_span_id as span_id, c.last_end_ns as end_ns,
       assumeNotNull(c.rule) as rule, t.task_type as task_type, m.model as model,
       c.calls as calls, c.first_tokens as first_tokens, c.final_tokens as final_tokens,
       c.overflows as overflows, c.first_ms as first_ms, c.final_ms as final_ms,
       c.ms_per_1k_tokens as ms_per_1k_tokens
from classified as c
inner join task_models as m on m.task_id = c.task_id
left join (select task_id, task_type from {{finding_tasks}}
           where start_ns >= {reach_ns:Int64} and start_ns < {hi_ns:Int64}) as t
       on t.task_id = c.task_id
where c.rule is not null
settings join_use_nulls = 1
