-- queries.findings.context_growth.growing_contexts: which task types have model calls whose prompts grow step by step past the limit, or multiply over a short conversation while the model slows down?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_growing_contexts.sql;
-- the rule is the evidence's label)
with growth as (
    select
        task_type, label as rule,
        sum(n['tasks'])::BIGINT as tasks,
        list_aggregate(flatten(list(vals['calls'])), 'median') as calls_per_task,
        list_aggregate(flatten(list(vals['first_tokens'])), 'median') as first_tokens,
        list_aggregate(flatten(list(vals['final_tokens'])), 'median') as final_tokens,
        max(n['max_final_tokens'])::BIGINT as max_final_tokens,
        list_aggregate(flatten(list(vals['tokens_per_step'])), 'median') as tokens_per_step,
        list_aggregate(flatten(list(vals['token_factor'])), 'median') as token_factor,
        list_aggregate(flatten(list(vals['token_factor_per_call'])), 'median')
            as token_factor_per_call,
        list_aggregate(flatten(list(vals['first_ms'])), 'median') as first_latency_ms,
        list_aggregate(flatten(list(vals['final_ms'])), 'median') as final_latency_ms,
        list_aggregate(flatten(list(vals['latency_factor'])), 'median') as latency_factor,
        list_aggregate(flatten(list(vals['ms_per_1k_tokens'])), 'median') as ms_per_1k_tokens,
        sum(n['timeouts_or_overflows'])::BIGINT as timeouts_or_overflows,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from temp.evidence_rows
    group by task_type, label
),
tallies as ({{evidence_tallies}}),
models as (
    -- the most used model of most of those tasks (the greatest of equals)
    select task_type, part, arg_max(value, {'n': times, 'v': value}) as model
    from tallies
    where what = 'model'
    group by task_type, part
),
examples as ({{evidence_examples}})
select
    g.task_type,
    g.rule,
    'model' as hop_kind,
    m.model as hop_name,
    g.* exclude (task_type, rule, first_ns, last_ns),
    e.examples,
    g.first_ns,
    g.last_ns
from growth g
left join models m on m.task_type is not distinct from g.task_type and m.part = g.rule
left join examples e on e.task_type is not distinct from g.task_type and e.part = g.rule
order by g.tasks desc
