"""Saturation: queue waits rising (last quarter of the evidence against the first) and rejections.

Queue waits are the durations of `queue` hop spans. Rejections are tasks whose outcome is
`rejected`, reported at their first failing hop (else the root).
"""

from __future__ import annotations

from agentsla.queries.findings import evidence
from agentsla.queries.findings._finding import dur, hop_label, make_finding, pct
from agentsla.queries.store import ReadStore

TYPE = "saturation"
_WAIT_EVIDENCE = ("late_p90_ms", "early_p90_ms", "max_wait_ms", "late_budget_ms", "waits")


def rising_queue_waits(store: ReadStore, params) -> list[dict]:
    """Answer: which queues' p90 wait rose from the first to the last quarter of their evidence?

    Columns: hop_kind, hop_name, waits, early_p90_ms, late_p90_ms, max_wait_ms, late_budget_ms
    (median budget of the last quarter's tasks), early_waits,
    examples, first_ns, last_ns.
    """
    return evidence.ask(store, "rising_queue_waits", params)


def rejections(store: ReadStore, params) -> list[dict]:
    """Answer: where were finished tasks rejected, and what share of all finished tasks?

    Columns: hop_kind, hop_name, rejected_tasks, rejected_share, examples, first_ns, last_ns.
    """
    return evidence.ask(store, "rejections", params)


def detect(store: ReadStore, params, th) -> list[dict]:
    """Find queues filling up and hops rejecting work."""
    found = []
    for row in rising_queue_waits(store, params):
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
    for row in rejections(store, params):
        severity = ("critical" if row["rejected_share"] >= th["saturation_rejection_critical_share"]
                    else "warning")
        hint = (f"{hop_label(row)} rejected {row['rejected_tasks']} tasks "
                f"({pct(row['rejected_share'])} of those finished): capacity is short of demand; "
                f"scale out or admit by priority")
        found.append(make_finding(TYPE, "rejections", row, severity, hint))
    return found
