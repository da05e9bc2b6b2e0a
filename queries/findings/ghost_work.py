"""Ghost work: spans that ran on after their task's root ended or its deadline passed.

The cutoff of a task is the earlier of its root's end and its deadline (task start + budget);
work after it is paid for (seconds, tokens) though the caller already gave up.
"""

from __future__ import annotations

from agentsla.queries.findings._finding import dur, hop_label, make_finding, run_question

TYPE = "ghost_work"

_WORK_AFTER_CUTOFF_SQL = """
with cutoffs as (
    select
        task_id, root_span_id,
        least(end_ns, start_ns + (budget_total_ms * 1e6)::bigint) as cutoff_ns  -- nulls skipped
    from tasks
),
ghosts as (
    select
        s.task_id, s.span_id, s.hop_kind, s.hop_name, s.end_ns,
        (s.end_ns - greatest(s.start_ns, c.cutoff_ns)) / 1e6 as ms_after,
        coalesce(s.input_tokens, 0) + coalesce(s.output_tokens, 0) as tokens,
        s.start_ns >= c.cutoff_ns as started_after
    from spans s
    join cutoffs c on c.task_id = s.task_id
    where s.end_ns >= $start_ns and s.end_ns < $end_ns
      and s.span_id is distinct from c.root_span_id
      and s.end_ns > c.cutoff_ns + ($ghost_work_grace_ms * 1e6)::bigint
)
select
    hop_kind, hop_name,
    sum(ms_after) / 1000 as seconds_after,
    sum(tokens) as tokens_after,
    count(*) as spans,
    count(distinct task_id) as tasks,
    max(ms_after) as max_ms_after,
    count(*) filter (where started_after) as started_after_cutoff,
    arg_max({'task_id': task_id, 'span_id': span_id}, ms_after, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from ghosts
group by hop_kind, hop_name
order by seconds_after desc
"""


def work_after_cutoff(cur, params) -> list[dict]:
    """Answer: which hops kept working after the task's root ended or its deadline passed?

    Columns: hop_kind, hop_name, seconds_after, tokens_after (tokens of those spans), spans,
    tasks, max_ms_after, started_after_cutoff, examples, first_ns, last_ns.
    """
    return run_question(cur, _WORK_AFTER_CUTOFF_SQL, params)


def _severity(row, th) -> str:
    # Critical from ghost_work_critical_s; info when it was a blip that spent no tokens.
    if row["seconds_after"] >= th["ghost_work_critical_s"]:
        return "critical"
    trivial = row["seconds_after"] * 1000 < th["ghost_work_grace_ms"] and not row["tokens_after"]
    return "info" if trivial else "warning"


def detect(cur, params, th) -> list[dict]:
    """Find ghost work by hop."""
    found = []
    for row in work_after_cutoff(cur, params):
        severity = _severity(row, th)
        tokens = f", {row['tokens_after']} tokens" if row["tokens_after"] else ""
        hint = (f"{hop_label(row)} ran {row['spans']} span(s) in {row['tasks']} task(s) after the "
                f"caller gave up ({dur(row['seconds_after'] * 1000)} in all, up to "
                f"{dur(row['max_ms_after'])}{tokens}); propagate cancellation and the deadline "
                f"to it and stop when the budget is gone")
        found.append(make_finding(TYPE, "work_after_cutoff", row, severity, hint))
    return found
