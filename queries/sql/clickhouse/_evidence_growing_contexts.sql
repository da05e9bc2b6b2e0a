-- snippet: evidence of findings/growing_contexts for the tasks whose last model call ended in
-- [lo_ns, hi_ns) with a prompt that grew (or multiplied), per minute of that end, task type
-- and rule (label): counts, each task's numbers the verdict takes medians of, the tasks' most
-- used models tallied per model (`model=...`, for the most used one); DuckDB's twin
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
),
typed as (
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
)
select
    intDiv(end_ns, 60000000000) * 60000000000 as minute_ns,
    'model' as hop_kind, CAST(NULL, 'Nullable(String)') as hop_name, task_type,
    rule as label, CAST([], 'Array(String)') as task_ids,
    mapConcat(
        map('tasks', toFloat64(count()), 'max_final_tokens', toFloat64(max(final_tokens)),
            'timeouts_or_overflows', toFloat64(sum(overflows))),
        sumMap(map(concat('model=', model), 1.0))) as n,
    map('calls', groupArray(toFloat64(calls)),
        'first_tokens', groupArray(toFloat64(first_tokens)),
        'final_tokens', groupArray(toFloat64(final_tokens)),
        'tokens_per_step', groupArray(toFloat64((final_tokens - first_tokens) / (calls - 1))),
        'token_factor', groupArray(toFloat64(final_tokens / first_tokens)),
        'token_factor_per_call',
        groupArray(toFloat64(pow(final_tokens / first_tokens, 1.0 / (calls - 1)))),
        'first_ms', groupArray(toFloat64(first_ms)), 'final_ms', groupArray(toFloat64(final_ms)),
        'latency_factor', groupArray(toFloat64(final_ms / first_ms)),
        'ms_per_1k_tokens', groupArray(toFloat64(ms_per_1k_tokens))) as vals,
    arraySlice(arrayReverseSort(groupArray((toFloat64(final_tokens), task_id, span_id))), 1, 5)
        as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from typed
group by minute_ns, task_type, rule
settings join_use_nulls = 1
