"""False failover: a fallback to a backup model or tool that then fails too (often its own quota).

A failover is marked by spans with `fallback_used` and `fallback_kind = backup_model` (or no kind
and a `fallback_to`); a cached or default result is a fallback, not a failover. All spans of one
trace marking the same backup are one failover. It failed when the backup hop's last call in the
trace (`hop_name = fallback_to`, started at or after the failover) is an error; without such a
call, when a marking span that is the backup's own call failed, else any marking span.
"""

from __future__ import annotations

from agentsla.queries.findings import evidence
from agentsla.queries.findings._finding import hop_label, make_finding, pct
from agentsla.queries.store import ReadStore

TYPE = "false_failover"


_EVIDENCE = ("failovers", "failed_failovers", "failure_share")


def failing_failovers(store: ReadStore, params) -> list[dict]:
    """Answer: which backups that traffic failed over to then failed themselves?

    Columns: hop_kind, hop_name (the backup), failovers, failed_failovers, failure_share,
    failure_type (most common), primary_hop (most common fallback_from), examples, first_ns,
    last_ns.
    """
    return evidence.ask(store, "failing_failovers", params)


def detect(store: ReadStore, params, th) -> list[dict]:
    """Find failovers whose backup failed."""
    found = []
    for row in failing_failovers(store, params):
        severity = ("critical" if row["failure_share"] >= th["false_failover_critical_share"]
                    else "warning")
        primary = f" from {row['primary_hop']}" if row["primary_hop"] else ""
        hint = (f"failover{primary} to {hop_label(row)} failed {row['failed_failovers']} of "
                f"{row['failovers']} times ({pct(row['failure_share'])}, mostly "
                f"{row['failure_type'] or 'errors'}); give the backup its own quota and provider, "
                f"and test it under the primary's peak load")
        found.append(make_finding(TYPE, "backup_failed", row, severity, hint, _EVIDENCE))
    return found
