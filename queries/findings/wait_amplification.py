"""Wait amplification: time a parent spent waiting, by polling or idle between its children.

Polling: one parent's same-name children starting at a steady interval (queries/sql/*/
_poll_loops.sql), whatever their durations, so polls that fill the parent's timeline count too.
The job the loop waited for is the trace's span that ended last while it polled; the *lateness*
of a wait is from that job's end to the end of the poll that saw it (the last one), reported per
wait (step) and summed per task. Idle gaps: a parent that does not poll, mostly idle between the
latest end of its earlier children and the next child's start (the wait before a retry attempt
is backoff, not a gap).
"""

from __future__ import annotations

from agentsla.queries.findings import evidence
from agentsla.queries.findings._finding import dur, hop_label, make_finding, pct
from agentsla.queries.store import ReadStore

TYPE = "wait_amplification"

_POLLING_EVIDENCE = ("loops", "polls_per_loop", "interval_ms", "interval_cv", "loops_with_job",
                     "late_ms", "max_late_ms", "task_late_ms", "late_seconds", "late_share")
_IDLE_EVIDENCE = ("parents", "interval_ms", "gaps_per_parent", "idle_share", "idle_seconds")


def polling_loops(store: ReadStore, params) -> list[dict]:
    """Answer: which hops poll, and how late did they see the job they waited for?

    Columns: hop_kind, hop_name, rule ('polling'), polled_hop, loops, polls_per_loop,
    interval_ms, interval_cv, loops_with_job (loops whose job is in the trace), late_ms (median
    per wait), max_late_ms, task_late_ms (median per task), late_seconds, late_share (of the
    parent's duration), examples, first_ns, last_ns.
    """
    return evidence.ask(store, "polling_loops", params)


def idle_gaps_between_children(store: ReadStore, params) -> list[dict]:
    """Answer: which hops sat idle between their children's calls (parents that poll excepted)?

    Columns: hop_kind, hop_name, rule ('idle_gaps'), parents, interval_ms (median gap),
    gaps_per_parent, idle_share, idle_seconds, examples, first_ns, last_ns.
    """
    return evidence.ask(store, "idle_gaps_between_children", params)


def detect(store: ReadStore, params, th) -> list[dict]:
    """Find polling loops (with their lateness) and parents idle between their children."""
    found = [_polling(row, th) for row in polling_loops(store, params)]
    for row in idle_gaps_between_children(store, params):
        hint = (f"{hop_label(row)} spent {pct(row['idle_share'])} of its time idle between "
                f"child calls (median gap {dur(row['interval_ms'])}, "
                f"{dur(row['idle_seconds'] * 1000)} in all); look for sleeps, lock waits or "
                f"serial steps that could overlap")
        found.append(make_finding(TYPE, "idle_gaps", row, "warning", hint, _IDLE_EVIDENCE))
    return found


def _polling(row: dict, th) -> dict:
    late = row["late_ms"]
    loop = (f"{hop_label(row)} polls {row['polled_hop']} every {dur(row['interval_ms'])} "
            f"(~{row['polls_per_loop']:.0f} polls per wait, cv {row['interval_cv']:.2f})")
    if late is None:
        # The job runs outside the trace: each wait is up to one interval late.
        severity = "warning" if row["interval_ms"] >= th["polling_late_ms"] else "info"
        hint = (f"{loop}; the awaited job is not in the trace, so each wait can be up to "
                f"{dur(row['interval_ms'])} late; use a callback or push notification, or "
                f"back off exponentially")
    else:
        severity = "warning" if late >= th["polling_late_ms"] else "info"
        hint = (f"{loop}; it saw the job done {dur(late)} after it ended (median per wait, "
                f"worst {dur(row['max_late_ms'])}, {dur(row['task_late_ms'])} per task, "
                f"{dur(row['late_seconds'] * 1000)} in all); use a callback or push "
                f"notification, or poll less often as the job nears its usual duration")
    return make_finding(TYPE, "polling", row, severity, hint, _POLLING_EVIDENCE)
