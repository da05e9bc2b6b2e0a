"""Context growth: input tokens climbing call after call within a task; long prompts timing out.

A task's model calls, in start order, grow when no call has fewer input tokens than the one
before and at least `context_growth_min_steps` calls have more. Separately, a model whose
timed-out calls had much longer prompts than its other calls is blamed on prompt length.
"""

from __future__ import annotations

from agentsla.queries.findings._finding import dur, hop_label, make_finding, run_question

TYPE = "context_growth"

_GROWING_CONTEXTS_SQL = """
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
"""

_LONG_PROMPTS_TIMING_OUT_SQL = """
with model_calls as (
    select task_id, span_id, hop_kind, hop_name, input_tokens, duration_ms, end_ns,
           coalesce(error_type in ('timeout', 'context_overflow'), false) as timed_out
    from spans
    where end_ns >= $start_ns and end_ns < $end_ns
      and hop_kind = 'model' and input_tokens > 0
)
select
    hop_kind, hop_name,
    count(*) as calls,
    count(*) filter (where timed_out) as timeouts,
    median(input_tokens) filter (where timed_out) as timed_out_median_tokens,
    median(input_tokens) filter (where not timed_out) as other_median_tokens,
    regr_slope(duration_ms, input_tokens) * 1000 as ms_per_1k_tokens,
    corr(duration_ms, input_tokens) as latency_prompt_corr,
    arg_max({'task_id': task_id, 'span_id': span_id}, input_tokens, 5)
        filter (where timed_out) as examples,
    min(end_ns) filter (where timed_out) as first_ns,
    max(end_ns) filter (where timed_out) as last_ns
from model_calls
group by hop_kind, hop_name
having count(*) filter (where timed_out) > 0
   and median(input_tokens) filter (where timed_out)
       >= $context_timeout_prompt_ratio * median(input_tokens) filter (where not timed_out)
order by timeouts desc
"""


def growing_contexts(cur, params) -> list[dict]:
    """Answer: which task types have model calls whose prompts grow step by step past the limit?

    Columns: task_type, hop_kind, hop_name (most used model), tasks, calls_per_task,
    first_tokens, final_tokens, max_final_tokens, tokens_per_step, timeouts_or_overflows,
    examples (the last call of each task), first_ns, last_ns.
    """
    return run_question(cur, _GROWING_CONTEXTS_SQL, params)


def long_prompts_timing_out(cur, params) -> list[dict]:
    """Answer: which models time out on prompts much longer than those of their other calls?

    Columns: hop_kind, hop_name, calls, timeouts, timed_out_median_tokens,
    other_median_tokens, ms_per_1k_tokens, latency_prompt_corr, examples, first_ns, last_ns.
    """
    return run_question(cur, _LONG_PROMPTS_TIMING_OUT_SQL, params)


def detect(cur, params, th) -> list[dict]:
    """Find growing contexts per task type and prompt-length timeouts per model."""
    found = []
    for row in growing_contexts(cur, params):
        severity = "warning" if row["timeouts_or_overflows"] else "info"
        hint = (f"{row['task_type'] or 'tasks'}: input tokens grow ~{row['tokens_per_step']:.0f} "
                f"per model call, from {row['first_tokens']:.0f} to {row['final_tokens']:.0f} "
                f"(median; max {row['max_final_tokens']}) over ~{row['calls_per_task']:.0f} "
                f"calls; summarize or trim the history and drop stale tool output")
        found.append(make_finding(TYPE, "growing_context", row, severity, hint))
    for row in long_prompts_timing_out(cur, params):
        slope = row["ms_per_1k_tokens"]
        per_k = f"; latency grows {dur(slope)} per 1k tokens" if slope else ""
        hint = (f"{hop_label(row)}: {row['timeouts']} call(s) timed out with a median prompt of "
                f"{row['timed_out_median_tokens']:.0f} tokens vs {row['other_median_tokens']:.0f} "
                f"for the others{per_k}; cap the prompt or scale the timeout with its length")
        found.append(make_finding(TYPE, "long_prompts_time_out", row, "warning", hint))
    return found
