-- queries.findings.context_growth.growing_contexts: which task types have model calls whose prompts grow step by step past the limit, or multiply over a short conversation while the model slows down?
-- (the verdict over the window's tasks, _evidence_growing_contexts.sql, asked inline)
with typed as ({{evidence_growing_contexts}}),
growth as (
    select
        task_type, rule,
        count() as n_tasks,
        quantileExactInclusive(0.5)(calls) as median_calls,
        quantileExactInclusive(0.5)(first_tokens) as median_first,
        quantileExactInclusive(0.5)(final_tokens) as median_final,
        toInt64(max(final_tokens)) as max_final,
        quantileExactInclusive(0.5)((final_tokens - first_tokens) / (calls - 1)) as per_step,
        quantileExactInclusive(0.5)(final_tokens / first_tokens) as factor,
        quantileExactInclusive(0.5)(pow(final_tokens / first_tokens, 1.0 / (calls - 1)))
            as factor_per_call,
        quantileExactInclusive(0.5)(first_ms) as median_first_ms,
        quantileExactInclusive(0.5)(final_ms) as median_final_ms,
        quantileExactInclusive(0.5)(final_ms / first_ms) as median_latency_factor,
        quantileExactInclusive(0.5)(ms_per_1k_tokens) as median_slope,
        toInt64(sum(overflows)) as n_overflows,
        arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
                 arraySlice(arrayReverseSort(groupArray(
                     (toFloat64(final_tokens), task_id, span_id))), 1, 5)) as top,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from typed
    group by task_type, rule
),
models as (
    -- the most used model of most of those tasks (the greatest of equals)
    select task_type, rule, argMax(model, (times, model)) as top_model
    from (select task_type, rule, model, count() as times from typed
          group by task_type, rule, model)
    group by task_type, rule
)
select
    g.task_type as task_type, g.rule as rule, 'model' as hop_kind, m.top_model as hop_name,
    g.n_tasks as tasks, g.median_calls as calls_per_task, g.median_first as first_tokens,
    g.median_final as final_tokens, g.max_final as max_final_tokens,
    g.per_step as tokens_per_step, g.factor as token_factor,
    g.factor_per_call as token_factor_per_call, g.median_first_ms as first_latency_ms,
    g.median_final_ms as final_latency_ms, g.median_latency_factor as latency_factor,
    g.median_slope as ms_per_1k_tokens, g.n_overflows as timeouts_or_overflows,
    g.top as examples, g.first_ns as first_ns, g.last_ns as last_ns
from growth as g
left join models as m on m.task_type <=> g.task_type and m.rule = g.rule
order by tasks desc
settings join_use_nulls = 1
