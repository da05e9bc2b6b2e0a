"""Saturation: queue waits rising (last quarter of the evidence against the first) and rejections.

Queue waits are the durations of `queue` hop spans. Rejections are tasks whose outcome is
`rejected`, reported at their first failing hop (else the root).
"""

from __future__ import annotations

from agentsla.queries.findings._finding import dur, hop_label, make_finding, pct, run_question

TYPE = "saturation"
_WAIT_EVIDENCE = ("late_p90_ms", "early_p90_ms", "max_wait_ms", "late_budget_ms", "waits")

_RISING_QUEUE_WAITS_SQL = """
with waits as (
    select s.task_id, s.span_id, s.hop_kind, s.hop_name, s.duration_ms, s.end_ns,
           t.budget_total_ms
    from spans s
    left join tasks t on t.task_id = s.task_id
    where s.end_ns >= $start_ns and s.end_ns < $end_ns
      and s.hop_kind = 'queue'
),
spread as (
    select hop_kind, hop_name, min(end_ns) as lo_ns, max(end_ns) as hi_ns
    from waits
    group by hop_kind, hop_name
),
quarters as (
    -- the first and the last quarter of the hop's evidence time range
    select
        w.*,
        w.end_ns < s.lo_ns + (s.hi_ns - s.lo_ns) // 4 as early,
        w.end_ns >= s.hi_ns - (s.hi_ns - s.lo_ns) // 4 as late
    from waits w
    join spread s on s.hop_kind is not distinct from w.hop_kind
                 and s.hop_name is not distinct from w.hop_name
),
compared as (
    select
        hop_kind, hop_name,
        count(*) as waits,
        quantile_cont(duration_ms, 0.9) filter (where early) as early_p90_ms,
        quantile_cont(duration_ms, 0.9) filter (where late) as late_p90_ms,
        max(duration_ms) as max_wait_ms,
        median(budget_total_ms) filter (where late) as late_budget_ms,
        count(*) filter (where early) as early_waits,
        arg_max({'task_id': task_id, 'span_id': span_id}, duration_ms, 5)
            filter (where late) as examples,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from quarters
    group by hop_kind, hop_name
)
select *
from compared
where early_waits >= 3
  and late_p90_ms >= $saturation_min_wait_ms
  and late_p90_ms >= $saturation_wait_growth * early_p90_ms
  -- a wait that rose but leaves most of the budget is not yet saturation
  and (late_budget_ms is null or late_p90_ms >= $saturation_budget_share * late_budget_ms)
order by late_p90_ms desc
"""

_REJECTIONS_SQL = """
with finished as (
    select task_id, root_span_id, root_name, outcome, end_ns, ffh_kind, ffh_name, ffh_span_id
    from tasks
    where finished and end_ns >= $start_ns and end_ns < $end_ns
),
total as (
    select count(*) as tasks from finished
)
select
    coalesce(f.ffh_kind, 'gateway') as hop_kind,
    coalesce(f.ffh_name, f.root_name) as hop_name,
    count(*) as rejected_tasks,
    count(*) / any_value(t.tasks) as rejected_share,
    arg_max({'task_id': f.task_id, 'span_id': coalesce(f.ffh_span_id, f.root_span_id)}, f.end_ns, 5)
        as examples,
    min(f.end_ns) as first_ns,
    max(f.end_ns) as last_ns
from finished f, total t
where f.outcome = 'rejected'
group by 1, 2
having count(*) >= $saturation_min_rejections
   and count(*) >= $saturation_rejection_share * any_value(t.tasks)
order by rejected_tasks desc
"""


def rising_queue_waits(cur, params) -> list[dict]:
    """Answer: which queues' p90 wait rose from the first to the last quarter of their evidence?

    Columns: hop_kind, hop_name, waits, early_p90_ms, late_p90_ms, max_wait_ms, late_budget_ms
    (median budget of the last quarter's tasks), early_waits,
    examples, first_ns, last_ns.
    """
    return run_question(cur, _RISING_QUEUE_WAITS_SQL, params)


def rejections(cur, params) -> list[dict]:
    """Answer: where were finished tasks rejected, and what share of all finished tasks?

    Columns: hop_kind, hop_name, rejected_tasks, rejected_share, examples, first_ns, last_ns.
    """
    return run_question(cur, _REJECTIONS_SQL, params)


def detect(cur, params, th) -> list[dict]:
    """Find queues filling up and hops rejecting work."""
    found = []
    for row in rising_queue_waits(cur, params):
        growth = row["late_p90_ms"] / row["early_p90_ms"] if row["early_p90_ms"] else None
        rise = "" if not growth else f" ({growth:.0f}×)" if growth >= 10 else f" ({growth:.1f}×)"
        budget = (f", against a {dur(row['late_budget_ms'])} task budget"
                  if row["late_budget_ms"] else "")
        hint = (f"{hop_label(row)}: p90 wait rose from {dur(row['early_p90_ms'])} to "
                f"{dur(row['late_p90_ms'])}{rise}, max {dur(row['max_wait_ms'])}{budget}; "
                f"add workers "
                f"or shed load early (bounded queue, reject with Retry-After) before waits eat "
                f"the budget")
        found.append(make_finding(TYPE, "rising_queue_wait", row, "warning", hint,
                                  _WAIT_EVIDENCE))
    for row in rejections(cur, params):
        severity = "critical" if row["rejected_share"] >= 0.05 else "warning"
        hint = (f"{hop_label(row)} rejected {row['rejected_tasks']} tasks "
                f"({pct(row['rejected_share'])} of those finished): capacity is short of demand; "
                f"scale out or admit by priority")
        found.append(make_finding(TYPE, "rejections", row, severity, hint))
    return found
