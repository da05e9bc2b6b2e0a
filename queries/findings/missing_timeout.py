"""Missing timeout: hops configured with `hop.timeout_ms = 0` (wait forever) that ran long.

Only an explicit 0 counts: a span that does not say its timeout (null) is unknown, not missing.
Calls still hanging are invisible until they end; the ones that did end long show the risk.
"""

from __future__ import annotations

from agentsla.queries.findings import evidence
from agentsla.queries.findings._finding import dur, hop_label, make_finding
from agentsla.queries.store import ReadStore

TYPE = "missing_timeout"


def long_calls_without_timeout(store: ReadStore, params) -> list[dict]:
    """Answer: which hops without a timeout had calls that ran long (or long for the hop)?

    Columns: hop_kind, hop_name, max_ms, long_calls, calls, p50_ms, median_long_ms, bad_tasks
    (tasks among them that failed, ran out of budget or were lost), examples, first_ns, last_ns.
    """
    return evidence.ask(store, "long_calls_without_timeout", params)


def detect(store: ReadStore, params, th) -> list[dict]:
    """Find hops without a timeout that ran long."""
    found = []
    for row in long_calls_without_timeout(store, params):
        # Critical when it hurt tasks, or hung for several times the "long" threshold.
        critical = (row["bad_tasks"] or row["max_ms"]
                    >= th["missing_timeout_critical_factor"] * th["missing_timeout_long_ms"])
        hint = (f"{hop_label(row)} has no timeout and ran up to {dur(row['max_ms'])} "
                f"({row['long_calls']} of {row['calls']} calls long; median "
                f"{dur(row['p50_ms'])}); set a timeout near its p99 that fits the caller's budget")
        found.append(make_finding(TYPE, "no_timeout_ran_long", row,
                                  "critical" if critical else "warning", hint))
    return found
