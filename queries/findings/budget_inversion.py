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

from agentsla.queries.findings import evidence
from agentsla.queries.findings._finding import dur, hop_label, make_finding
from agentsla.queries.store import ReadStore

TYPE = "budget_inversion"
_LEFT_EVIDENCE = ("timeout_ms", "attempts", "worst_case_ms", "left_ms", "inverted_calls", "calls",
                  "timeout_alone_exceeds", "bad_tasks", "median_left_ms")


def timeouts_exceeding_budget_left(store: ReadStore, params) -> list[dict]:
    """Answer: which hops' timeout × remaining attempts exceeded what their caller had left?

    Columns: hop_kind, hop_name, calls, inverted_calls, timeout_alone_exceeds, bad_tasks (tasks
    of inverted calls that failed, ran out of budget or were lost), timeout_ms,
    attempts, worst_case_ms, left_ms, bound_by (of the call that overshot most; bound_by names
    the tightest limit: the task budget, the parent or the root), median_left_ms, examples,
    first_ns, last_ns.
    """
    return evidence.ask(store, "timeouts_exceeding_budget_left", params)


def children_exceeding_parent_timeout(store: ReadStore, params) -> list[dict]:
    """Answer: which hops that timed out have sequential children whose worst cases exceed it?

    Columns: hop_kind, hop_name, parents, parent_timeout_ms, median_children_worst_ms,
    max_children_worst_ms, median_child_calls, parents_timed_out, examples, first_ns, last_ns.
    """
    return evidence.ask(store, "children_exceeding_parent_timeout", params)


def detect(store: ReadStore, params, th) -> list[dict]:
    """Find budget inversions of both shapes."""
    found = []
    for row in timeouts_exceeding_budget_left(store, params):
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
    for row in children_exceeding_parent_timeout(store, params):
        severity = "warning"
        hint = (f"{hop_label(row)}: its ~{row['median_child_calls']:.0f} sequential calls may "
                f"take {dur(row['median_children_worst_ms'])} in the worst case (median; max "
                f"{dur(row['max_children_worst_ms'])}) but it allows "
                f"{dur(row['parent_timeout_ms'])}; shrink the per-call timeouts or the number "
                f"of calls, or give each call the budget left")
        found.append(make_finding(TYPE, "children_exceed_parent_timeout", row, severity, hint))
    return found
