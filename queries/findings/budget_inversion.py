"""Budget inversion: a hop's timeout (× attempts it may still make) exceeds what its caller had left.

What the caller had left when a call started is the least of:
- the budget: the span's own `budget_remaining_ms`, else its parent's minus the time elapsed since
  the parent started, else the task's `budget_total_ms` minus the time elapsed since the task
  started (see the brief's "Remaining budget of a hop");
- the parent's timeout minus the time elapsed since the parent started;
- the root's timeout minus the time elapsed since the root started (the gateway's deadline).
A call that started with nothing left is budget exhaustion, not an inversion; a hop with timeout 0
(none) is a missing timeout, never an inversion.
"""

from __future__ import annotations

from agentsla.queries.findings._finding import dur, hop_label, make_finding, run_question

TYPE = "budget_inversion"
_LEFT_EVIDENCE = ("timeout_ms", "attempts", "worst_case_ms", "left_ms", "inverted_calls", "calls",
                  "timeout_alone_exceeds", "bad_tasks", "median_left_ms")

_TIMEOUT_EXCEEDS_LEFT_SQL = """
with timed_calls as (
    -- calls with a timeout that ended in the window
    select trace_id, span_id, parent_span_id, task_id, hop_kind, hop_name, start_ns, end_ns,
           hop_timeout_ms, retry_max,
           coalesce(attempt, retry_attempt, 0) as attempt,  -- retry_attempt: not materialized yet
           budget_remaining_ms
    from spans
    where end_ns >= $start_ns and end_ns < $end_ns
      and hop_timeout_ms > 0
      and parent_span_id is not null
),
placed as (
    select
        c.task_id, c.span_id, c.hop_kind, c.hop_name, c.end_ns, c.hop_timeout_ms,
        -- attempts this call may still make, itself included
        greatest(coalesce(c.retry_max, 0) + 1 - c.attempt, 1) as attempts_left,
        coalesce(
            c.budget_remaining_ms,
            p.budget_remaining_ms - (c.start_ns - p.start_ns) / 1e6,
            t.budget_total_ms - (c.start_ns - t.start_ns) / 1e6
        ) as budget_left_ms,
        case when p.hop_timeout_ms > 0
             then p.hop_timeout_ms - (c.start_ns - p.start_ns) / 1e6 end as parent_left_ms,
        case when r.hop_timeout_ms > 0
             then r.hop_timeout_ms - (c.start_ns - r.start_ns) / 1e6 end as root_left_ms,
        p.hop_name as parent_name, r.hop_name as root_name,
        t.outcome in ('failed', 'budget_exhausted', 'lost') as task_bad
    from timed_calls c
    left join spans p on p.trace_id = c.trace_id and p.span_id = c.parent_span_id
    left join tasks t on t.task_id = c.task_id
    left join spans r on r.trace_id = t.trace_id and r.span_id = t.root_span_id
),
judged as (
    select
        *,
        least(budget_left_ms, parent_left_ms, root_left_ms) as left_ms,  -- least() skips nulls
        hop_timeout_ms * attempts_left as worst_ms,
        -- which limit was the tightest, for the hint
        case least(budget_left_ms, parent_left_ms, root_left_ms)
            when parent_left_ms then parent_name
            when root_left_ms then root_name
            else 'the task budget'
        end as bound_by
    from placed
),
flagged as (
    select *, left_ms > 0 and worst_ms > left_ms as inverted
    from judged
)
select
    hop_kind, hop_name,
    count(*) as calls,
    count(*) filter (where inverted) as inverted_calls,
    count(*) filter (where inverted and hop_timeout_ms > left_ms) as timeout_alone_exceeds,
    count(distinct task_id) filter (where inverted and task_bad) as bad_tasks,
    -- the call that overshot most, for the headline arithmetic
    arg_max(hop_timeout_ms, worst_ms - left_ms) filter (where inverted) as timeout_ms,
    arg_max(attempts_left, worst_ms - left_ms) filter (where inverted) as attempts,
    arg_max(worst_ms, worst_ms - left_ms) filter (where inverted) as worst_case_ms,
    arg_max(left_ms, worst_ms - left_ms) filter (where inverted) as left_ms,
    arg_max(bound_by, worst_ms - left_ms) filter (where inverted) as bound_by,
    median(left_ms) filter (where inverted) as median_left_ms,
    arg_max({'task_id': task_id, 'span_id': span_id}, worst_ms - left_ms, 5)
        filter (where inverted) as examples,
    min(end_ns) filter (where inverted) as first_ns,
    max(end_ns) filter (where inverted) as last_ns
from flagged
group by hop_kind, hop_name
having count(*) filter (where inverted) > 0
   and count(*) filter (where inverted) >= $budget_inversion_min_share * count(*)
order by inverted_calls desc
"""

_CHILDREN_EXCEED_PARENT_SQL = """
with parents as (
    -- hops with a timeout that ended in the window
    select trace_id, span_id, task_id, hop_kind, hop_name, hop_timeout_ms, is_error, error_type,
           end_ns
    from spans
    where end_ns >= $start_ns and end_ns < $end_ns
      and hop_timeout_ms > 0
),
child_calls as (
    -- first attempts of their timed children, with the worst case of each logical call
    select
        c.trace_id, c.parent_span_id, c.start_ns,
        c.hop_timeout_ms * (coalesce(c.retry_max, 0) + 1) as worst_ms,
        max(c.end_ns) over (partition by c.trace_id, c.parent_span_id order by c.start_ns
                            rows between unbounded preceding and 1 preceding) as prev_end_ns
    from spans c
    semi join parents p on p.trace_id = c.trace_id and p.span_id = c.parent_span_id
    where coalesce(c.attempt, c.retry_attempt, 0) = 0 and c.hop_timeout_ms > 0
),
sums as (
    select
        trace_id, parent_span_id,
        count(*) as child_calls,
        sum(worst_ms) as children_worst_ms,
        -- parallel children do not add up; only judge parents whose children ran one by one
        count(*) filter (where start_ns < prev_end_ns) as overlapping
    from child_calls
    group by trace_id, parent_span_id
)
select
    p.hop_kind, p.hop_name,
    count(*) as parents,
    max(p.hop_timeout_ms) as parent_timeout_ms,
    median(s.children_worst_ms) as median_children_worst_ms,
    max(s.children_worst_ms) as max_children_worst_ms,
    median(s.child_calls) as median_child_calls,
    count(*) filter (where p.error_type in ('timeout', 'budget_exhausted')) as parents_timed_out,
    arg_max({'task_id': p.task_id, 'span_id': p.span_id}, s.children_worst_ms, 5) as examples,
    min(p.end_ns) as first_ns,
    max(p.end_ns) as last_ns
from parents p
join sums s on s.trace_id = p.trace_id and s.parent_span_id = p.span_id
where s.overlapping = 0 and s.child_calls >= 2 and s.children_worst_ms > p.hop_timeout_ms
group by p.hop_kind, p.hop_name
-- a configuration risk only becomes a finding once such a parent actually ran out of time
having count(*) filter (where p.error_type in ('timeout', 'budget_exhausted')) > 0
order by parents desc
"""


def timeouts_exceeding_budget_left(cur, params) -> list[dict]:
    """Answer: which hops' timeout × remaining attempts exceeded what their caller had left?

    Columns: hop_kind, hop_name, calls, inverted_calls, timeout_alone_exceeds, bad_tasks (tasks
    of inverted calls that failed, ran out of budget or were lost), timeout_ms,
    attempts, worst_case_ms, left_ms, bound_by (of the call that overshot most; bound_by names
    the tightest limit: the task budget, the parent or the root), median_left_ms, examples,
    first_ns, last_ns.
    """
    return run_question(cur, _TIMEOUT_EXCEEDS_LEFT_SQL, params)


def children_exceeding_parent_timeout(cur, params) -> list[dict]:
    """Answer: which hops that timed out have sequential children whose worst cases exceed it?

    Columns: hop_kind, hop_name, parents, parent_timeout_ms, median_children_worst_ms,
    max_children_worst_ms, median_child_calls, parents_timed_out, examples, first_ns, last_ns.
    """
    return run_question(cur, _CHILDREN_EXCEED_PARENT_SQL, params)


def detect(cur, params, th) -> list[dict]:
    """Find budget inversions of both shapes."""
    found = []
    for row in timeouts_exceeding_budget_left(cur, params):
        # Critical when one attempt alone cannot fit or tasks already failed for it; warning
        # when only the retries could overflow.
        critical = row["timeout_alone_exceeds"] or row["bad_tasks"]
        severity = "critical" if critical else "warning"
        worst = (f"timeout {dur(row['timeout_ms'])} × {row['attempts']} attempts = "
                 f"{dur(row['worst_case_ms'])}" if row["attempts"] > 1
                 else f"timeout {dur(row['timeout_ms'])}")
        hint = (f"{hop_label(row)} {worst} exceeds the {dur(row['left_ms'])} "
                f"left under {row['bound_by'] or 'its caller'} ({row['inverted_calls']} of "
                f"{row['calls']} calls; median left {dur(row['median_left_ms'])}); "
                f"cap the timeout at the "
                f"remaining budget and retry connection errors only")
        found.append(make_finding(TYPE, "timeout_exceeds_budget_left", row, severity, hint,
                                  _LEFT_EVIDENCE))
    for row in children_exceeding_parent_timeout(cur, params):
        severity = "warning"
        hint = (f"{hop_label(row)}: its ~{row['median_child_calls']:.0f} sequential calls may "
                f"take {dur(row['median_children_worst_ms'])} in the worst case (median; max "
                f"{dur(row['max_children_worst_ms'])}) but it allows "
                f"{dur(row['parent_timeout_ms'])}; shrink the per-call timeouts or the number "
                f"of calls, or give each call the budget left")
        found.append(make_finding(TYPE, "children_exceed_parent_timeout", row, severity, hint))
    return found
