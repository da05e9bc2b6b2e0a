"""Retry amplification: attempts per logical call by hop, retried timeouts, retry storms.

Attempts of one logical call are sibling spans of the same hop, as materialization numbered them
(the snippet `attempts`); a call is evidence in the minute its last attempt ended
(queries/findings/evidence.py). A retried timeout waits the full timeout again on a dependency that
just proved slow; a storm is a minute in which most of a hop's attempts were retries.
"""

from __future__ import annotations

from agentsla.queries.findings import evidence
from agentsla.queries.findings._finding import dur, hop_label, make_finding, pct
from agentsla.queries.store import ReadStore

TYPE = "retry_amplification"


def attempts_per_call(store: ReadStore, params) -> list[dict]:
    """Answer: which hops average too many attempts per logical call?

    Columns: hop_kind, hop_name, calls, attempts, attempts_per_call, max_attempts,
    retried_calls, examples, first_ns, last_ns.
    """
    return evidence.ask(store, "attempts_per_call", params)


def retried_timeouts(store: ReadStore, params) -> list[dict]:
    """Answer: which hops retried attempts that had timed out?

    Columns: hop_kind, hop_name, retried_timeouts, tasks, timeout_ms,
    time_in_retried_timeouts_ms, examples, first_ns, last_ns.
    """
    return evidence.ask(store, "retried_timeouts", params)


def retry_storms(store: ReadStore, params) -> list[dict]:
    """Answer: which hops had minutes where most attempts were retries?

    Columns: hop_kind, hop_name, storm_minutes, peak_retries_per_minute, peak_retry_share,
    retries, examples, first_ns, last_ns.
    """
    return evidence.ask(store, "retry_storms", params)


def detect(store: ReadStore, params, th) -> list[dict]:
    """Find retry amplification of the three shapes."""
    found = []
    for row in attempts_per_call(store, params):
        heavy = (row["attempts_per_call"]
                 >= th["retry_critical_factor"] * th["retry_attempts_per_call"])
        severity = "critical" if heavy else "warning"
        hint = (f"{hop_label(row)} averages {row['attempts_per_call']:.2f} attempts per call "
                f"(max {row['max_attempts']}; {row['retried_calls']} of {row['calls']} calls "
                f"retried): each failure multiplies its load; cap retries at 1, add jittered "
                f"backoff and a circuit breaker")
        found.append(make_finding(TYPE, "attempts_per_call", row, severity, hint))
    for row in retried_timeouts(store, params):
        hint = (f"{hop_label(row)} retried {row['retried_timeouts']} timed-out attempts "
                f"(timeout {dur(row['timeout_ms'])}, {dur(row['time_in_retried_timeouts_ms'])} "
                f"spent in them): a retry waits the full timeout again on a slow dependency; "
                f"retry connection errors only, or fail over instead")
        found.append(make_finding(TYPE, "retried_timeouts", row, "warning", hint))
    for row in retry_storms(store, params):
        hint = (f"{hop_label(row)} had {row['storm_minutes']} retry-storm minute(s), peaking at "
                f"{row['peak_retries_per_minute']} retries/min ({pct(row['peak_retry_share'])} of "
                f"attempts): add a retry budget (e.g. retries ≤ 10 % of calls) and a circuit "
                f"breaker")
        found.append(make_finding(TYPE, "retry_storm", row, "critical", hint))
    return found
