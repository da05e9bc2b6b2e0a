"""Wait amplification: idle gaps inside a parent between one child's end and the next child's start.

A gap is measured from the latest end of the earlier children (so parallel children do not make
gaps) to the next child's start; the wait before a retry attempt is backoff, not a gap. Many
near-equal gaps (low coefficient of variation) are polling,
reported with their interval; otherwise a parent mostly idle between children is reported.
"""

from __future__ import annotations

from agentsla.queries.findings._finding import dur, hop_label, make_finding, pct
from agentsla.queries.store import ReadStore

TYPE = "wait_amplification"


_EVIDENCE = ("parents", "interval_ms", "gap_cv", "gaps_per_parent", "idle_share", "idle_seconds")


def idle_gaps_between_children(store: ReadStore, params) -> list[dict]:
    """Answer: which hops sat idle between their children's calls, polling or otherwise?

    Columns: hop_kind, hop_name, rule ('polling' or 'idle_gaps'), parents, interval_ms (median
    gap), gap_cv, gaps_per_parent, idle_share, idle_seconds, polled_hop, examples, first_ns,
    last_ns.
    """
    return store.rows("findings/idle_gaps_between_children", params)


def detect(store: ReadStore, params, th) -> list[dict]:
    """Find polling loops and parents idle between their children."""
    found = []
    for row in idle_gaps_between_children(store, params):
        idle = (row["idle_share"] or 0) >= th["wait_idle_share"]
        if row["rule"] == "polling":
            severity = "warning" if idle else "info"
            hint = (f"{hop_label(row)} polls {row['polled_hop']} every {dur(row['interval_ms'])} "
                    f"(cv {row['gap_cv']:.2f}, ~{row['gaps_per_parent']:.0f} waits per call, "
                    f"{pct(row['idle_share'])} of its time idle); use a callback or push "
                    f"notification, or back off exponentially")
        else:
            severity = "warning"
            hint = (f"{hop_label(row)} spent {pct(row['idle_share'])} of its time idle between "
                    f"child calls (median gap {dur(row['interval_ms'])}, "
                    f"{dur(row['idle_seconds'] * 1000)} in all); look for sleeps, lock waits or "
                    f"serial steps that could overlap")
        found.append(make_finding(TYPE, row["rule"], row, severity, hint, _EVIDENCE))
    return found
