-- queries.findings.context_growth.growing_contexts: which task types have model calls whose prompts grow step by step past the limit?
with recent_tasks as (
    -- tasks with a model call that ended in the window
    select distinct task_id
    from spans
    where end_ns >= $start_ns and end_ns < $end_ns
      and hop_kind = 'model' and input_tokens is not null
),
model_calls as (
    select
        s.task_id, s.span_id, s.hop_name, s.start_ns, s.end_ns, s.input_tokens, s.error_type,
        lag(s.input_tokens) over (partition by s.task_id order by s.start_ns) as prev_tokens
    from spans s
    semi join recent_tasks r on r.task_id = s.task_id
    where s.hop_kind = 'model' and s.input_tokens is not null
),
per_task as (
    select
        task_id,
        count(*) as calls,
        count(*) filter (where input_tokens > prev_tokens) as growing_steps,
        count(*) filter (where input_tokens < prev_tokens) as shrinking_steps,
        arg_min(input_tokens, start_ns) as first_tokens,
        arg_max(input_tokens, start_ns) as final_tokens,
        arg_max(span_id, start_ns) as last_span_id,
        count(*) filter (where error_type in ('timeout', 'context_overflow')) as overflows,
        mode(hop_name) as model,
        max(end_ns) as end_ns
    from model_calls
    group by task_id
),
growing as (
    select *
    from per_task
    where shrinking_steps = 0
      and growing_steps >= $context_growth_min_steps
      and final_tokens > $context_growth_final_tokens
      and end_ns >= $start_ns and end_ns < $end_ns
)
select
    t.task_type,
    'model' as hop_kind,
    mode(g.model) as hop_name,
    count(*) as tasks,
    median(g.calls) as calls_per_task,
    median(g.first_tokens) as first_tokens,
    median(g.final_tokens) as final_tokens,
    max(g.final_tokens) as max_final_tokens,
    median((g.final_tokens - g.first_tokens) / (g.calls - 1)) as tokens_per_step,
    sum(g.overflows) as timeouts_or_overflows,
    arg_max({'task_id': g.task_id, 'span_id': g.last_span_id}, g.final_tokens, 5) as examples,
    min(g.end_ns) as first_ns,
    max(g.end_ns) as last_ns
from growing g
left join tasks t on t.task_id = g.task_id
group by t.task_type
order by tasks desc
