-- queries.findings.context_growth.growing_contexts: which task types have model calls whose prompts grow step by step past the limit, or multiply over a short conversation while the model slows down?
-- (the verdict over the window's evidence, _evidence_growing_contexts.sql, asked inline; the
-- rule is the evidence's label)
with evidence_rows as materialized ({{evidence_growing_contexts}}),
growth as (
    select
        task_type, label as rule,
        toInt64(sum(n['tasks'])) as n_tasks,
        quantileExactInclusiveOrNullArray(0.5)(vals['calls']) as median_calls,
        quantileExactInclusiveOrNullArray(0.5)(vals['first_tokens']) as median_first,
        quantileExactInclusiveOrNullArray(0.5)(vals['final_tokens']) as median_final,
        toInt64(max(n['max_final_tokens'])) as max_final,
        quantileExactInclusiveOrNullArray(0.5)(vals['tokens_per_step']) as per_step,
        quantileExactInclusiveOrNullArray(0.5)(vals['token_factor']) as factor,
        quantileExactInclusiveOrNullArray(0.5)(vals['token_factor_per_call']) as factor_per_call,
        quantileExactInclusiveOrNullArray(0.5)(vals['first_ms']) as median_first_ms,
        quantileExactInclusiveOrNullArray(0.5)(vals['final_ms']) as median_final_ms,
        quantileExactInclusiveOrNullArray(0.5)(vals['latency_factor']) as median_latency_factor,
        quantileExactInclusiveOrNullArray(0.5)(vals['ms_per_1k_tokens']) as median_slope,
        toInt64(sum(n['timeouts_or_overflows'])) as n_overflows,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns,
        {{evidence_best5}} as top5
    from evidence_rows
    group by task_type, label
),
tallies as ({{evidence_tallies}}),
models as (
    -- the most used model of most of those tasks (the greatest of equals)
    select task_type, part, argMax(value, (times, value)) as top_model
    from tallies
    where what = 'model'
    group by task_type, part
)
select
    g.task_type as task_type, g.rule as rule, 'model' as hop_kind, m.top_model as hop_name,
    g.n_tasks as tasks, g.median_calls as calls_per_task, g.median_first as first_tokens,
    g.median_final as final_tokens, g.max_final as max_final_tokens,
    g.per_step as tokens_per_step, g.factor as token_factor,
    g.factor_per_call as token_factor_per_call, g.median_first_ms as first_latency_ms,
    g.median_final_ms as final_latency_ms, g.median_latency_factor as latency_factor,
    g.median_slope as ms_per_1k_tokens, g.n_overflows as timeouts_or_overflows,
    g.top5 as examples, g.first_ns as first_ns, g.last_ns as last_ns
from growth as g
left join models as m on m.task_type <=> g.task_type and m.part <=> g.rule
order by tasks desc
settings join_use_nulls = 1, enable_materialized_cte = 1
