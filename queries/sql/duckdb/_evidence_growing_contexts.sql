-- snippet: evidence of findings/growing_contexts for the tasks whose last model call ended in
-- [$lo_ns, $hi_ns) with a prompt that grew (or multiplied), per minute of that end, task type
-- and rule (label): counts, each task's numbers the verdict takes medians of, the models'
-- calls tallied per model (`model=...`, for the most used one).
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
      and end_ns >= $lo_ns and end_ns < $hi_ns
),
typed as (
    select c.*, t.task_type, m.model
    from classified c
    join task_models m on m.task_id = c.task_id
    left join (select task_id, task_type from tasks
               where start_ns >= $reach_ns and start_ns < $hi_ns) t on t.task_id = c.task_id
    where c.rule is not null
)
select
    end_ns // $grain_ns * $grain_ns as minute_ns,
    'model' as hop_kind, task_type, rule as label,
    map_concat(
        map {'tasks': count(*)::DOUBLE, 'max_final_tokens': max(final_tokens)::DOUBLE,
             'timeouts_or_overflows': sum(overflows)::DOUBLE},
        map_from_entries(list_transform(map_entries(histogram(model)),
                                        lambda e: {'key': 'model=' || e.key,
                                                   'value': e.value::DOUBLE}))
    )::MAP(VARCHAR, DOUBLE) as n,
    map {'calls': list(calls), 'first_tokens': list(first_tokens),
         'final_tokens': list(final_tokens),
         'tokens_per_step': list((final_tokens - first_tokens) / (calls - 1)),
         'token_factor': list(final_tokens / first_tokens),
         'token_factor_per_call': list(power(final_tokens / first_tokens, 1.0 / (calls - 1))),
         'first_ms': list(first_ms), 'final_ms': list(final_ms),
         'latency_factor': list(final_ms / first_ms),
         'ms_per_1k_tokens': list(ms_per_1k_tokens)}::MAP(VARCHAR, DOUBLE[]) as vals,
    arg_max({'task_id': task_id, 'span_id': last_span_id, 'rank': final_tokens},
            {'r': final_tokens, 't': task_id, 's': last_span_id}, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from typed
group by all
