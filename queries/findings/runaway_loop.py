"""Runaway loop: agents that took more steps than their `loop_limit`, or stopped on `loop_limit`.

A step is one logical model call made directly by the agent span (retries of a call are one
step); an agent that calls no model directly counts its logical child calls of any hop.
"""

from __future__ import annotations

from agentsla.queries.findings._finding import hop_label, make_finding, run_question

TYPE = "runaway_loop"

_STEPS_BEYOND_LIMIT_SQL = """
with agents as (
    select trace_id, span_id, task_id, hop_kind, hop_name, loop_limit, end_ns
    from spans
    where end_ns >= $start_ns and end_ns < $end_ns
      and hop_kind = 'agent' and loop_limit > 0
),
steps as (
    select
        c.trace_id, c.parent_span_id,
        count(*) filter (where c.hop_kind = 'model') as model_calls,
        count(*) as calls
    from spans c
    semi join agents a on a.trace_id = c.trace_id and a.span_id = c.parent_span_id
    where coalesce(c.attempt, c.retry_attempt, 0) = 0  -- retry_attempt: not materialized yet
    group by c.trace_id, c.parent_span_id
),
counted as (
    select a.*, case when s.model_calls > 0 then s.model_calls else s.calls end as steps
    from agents a
    join steps s on s.trace_id = a.trace_id and s.parent_span_id = a.span_id
)
select
    hop_kind, hop_name,
    count(*) as runs_over_limit,
    max(loop_limit) as loop_limit,
    median(steps) as median_steps,
    max(steps) as max_steps,
    arg_max({'task_id': task_id, 'span_id': span_id}, steps, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from counted
where steps > loop_limit
group by hop_kind, hop_name
order by runs_over_limit desc
"""

_LOOP_LIMIT_ERRORS_SQL = """
select
    hop_kind, hop_name,
    count(*) as loop_limit_errors,
    count(distinct task_id) as tasks,
    max(loop_limit) as loop_limit,
    arg_max({'task_id': task_id, 'span_id': span_id}, end_ns, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from spans
where end_ns >= $start_ns and end_ns < $end_ns
  and error_type = 'loop_limit'
group by hop_kind, hop_name
order by loop_limit_errors desc
"""


def steps_beyond_limit(cur, params) -> list[dict]:
    """Answer: which agents took more steps than their loop limit allows?

    Columns: hop_kind, hop_name, runs_over_limit, loop_limit, median_steps, max_steps,
    examples, first_ns, last_ns.
    """
    return run_question(cur, _STEPS_BEYOND_LIMIT_SQL, params)


def loop_limit_errors(cur, params) -> list[dict]:
    """Answer: which hops stopped with error_type loop_limit?

    Columns: hop_kind, hop_name, loop_limit_errors, tasks, loop_limit, examples, first_ns, last_ns.
    """
    return run_question(cur, _LOOP_LIMIT_ERRORS_SQL, params)


def detect(cur, params, th) -> list[dict]:
    """Find agents looping past their limit and loops stopped by it."""
    found = []
    for row in steps_beyond_limit(cur, params):
        hint = (f"{hop_label(row)} took up to {row['max_steps']} steps (median "
                f"{row['median_steps']:.0f}) against a loop limit of {row['loop_limit']} in "
                f"{row['runs_over_limit']} run(s): the limit is not enforced; check it before "
                f"every model call")
        found.append(make_finding(TYPE, "steps_beyond_limit", row, "critical", hint))
    for row in loop_limit_errors(cur, params):
        limit = f" of {row['loop_limit']}" if row["loop_limit"] else ""
        hint = (f"{hop_label(row)} hit its loop limit{limit} {row['loop_limit_errors']} time(s) "
                f"in {row['tasks']} task(s): the agent does not converge; add a stop condition "
                f"or detect repeated tool calls")
        found.append(make_finding(TYPE, "loop_limit_errors", row, "warning", hint))
    return found
