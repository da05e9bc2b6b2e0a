"""Ghost work: spans that ran on after their task's root ended or its deadline passed.

The cutoff of a task is the earlier of its root's end and its deadline (task start + budget);
work after it is paid for (seconds, tokens) though the caller already gave up.
"""

from __future__ import annotations

from agentsla.queries.findings import evidence
from agentsla.queries.findings._finding import dur, hop_label, make_finding
from agentsla.queries.store import ReadStore

TYPE = "ghost_work"


def work_after_cutoff(store: ReadStore, params) -> list[dict]:
    """Answer: which hops kept working after the task's root ended or its deadline passed?

    Columns: hop_kind, hop_name, seconds_after, tokens_after (tokens of those spans), spans,
    tasks, max_ms_after, started_after_cutoff, examples, first_ns, last_ns.
    """
    return evidence.ask(store, "work_after_cutoff", params)


def _severity(row, th) -> str:
    # Critical from ghost_work_critical_s; info when it was a blip that spent no tokens.
    if row["seconds_after"] >= th["ghost_work_critical_s"]:
        return "critical"
    trivial = row["seconds_after"] * 1000 < th["ghost_work_grace_ms"] and not row["tokens_after"]
    return "info" if trivial else "warning"


def detect(store: ReadStore, params, th) -> list[dict]:
    """Find ghost work by hop."""
    found = []
    for row in work_after_cutoff(store, params):
        severity = _severity(row, th)
        tokens = f", {row['tokens_after']} tokens" if row["tokens_after"] else ""
        hint = (f"{hop_label(row)} ran {row['spans']} span(s) in {row['tasks']} task(s) after the "
                f"caller gave up ({dur(row['seconds_after'] * 1000)} in all, up to "
                f"{dur(row['max_ms_after'])}{tokens}); propagate cancellation and the deadline "
                f"to it and stop when the budget is gone")
        found.append(make_finding(TYPE, "work_after_cutoff", row, severity, hint))
    return found
