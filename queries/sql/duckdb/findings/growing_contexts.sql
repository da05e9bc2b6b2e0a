-- queries.findings.context_growth.growing_contexts: which task types have model calls whose prompts grow step by step past the limit, or multiply over a short conversation while the model slows down?
with {{model_call_steps}},
classified as (
    select
        *,
        case
            when growing_steps >= $context_growth_min_steps
             and final_tokens > $context_growth_final_tokens then 'growing_context'
            -- the short, steep kind: a conversation (no call overlaps the one before) whose
            -- prompt multiplies (geometric mean growth per call) while the model slows down
            when overlapping_calls = 0 and calls >= $context_multiply_min_calls
             and first_tokens > 0 and final_tokens >= $context_multiply_min_tokens
             and power(final_tokens / first_tokens, 1.0 / (calls - 1)) >= $context_multiply_factor
             and final_ms >= $context_multiply_latency_factor * nullif(first_ms, 0)
            then 'multiplying_context'
        end as rule
    from per_task
    where shrinking_steps = 0
      and end_ns >= $start_ns and end_ns < $end_ns
)
select
    t.task_type,
    c.rule,
    'model' as hop_kind,
    mode(c.model) as hop_name,
    count(*) as tasks,
    median(c.calls) as calls_per_task,
    median(c.first_tokens) as first_tokens,
    median(c.final_tokens) as final_tokens,
    max(c.final_tokens) as max_final_tokens,
    median((c.final_tokens - c.first_tokens) / (c.calls - 1)) as tokens_per_step,
    median(c.final_tokens / c.first_tokens) as token_factor,
    median(power(c.final_tokens / c.first_tokens, 1.0 / (c.calls - 1))) as token_factor_per_call,
    median(c.first_ms) as first_latency_ms,
    median(c.final_ms) as final_latency_ms,
    median(c.final_ms / c.first_ms) as latency_factor,
    median(c.ms_per_1k_tokens) as ms_per_1k_tokens,
    sum(c.overflows) as timeouts_or_overflows,
    arg_max({'task_id': c.task_id, 'span_id': c.last_span_id}, c.final_tokens, 5) as examples,
    min(c.end_ns) as first_ns,
    max(c.end_ns) as last_ns
from classified c
left join tasks t on t.task_id = c.task_id
where c.rule is not null
group by t.task_type, c.rule
order by tasks desc
