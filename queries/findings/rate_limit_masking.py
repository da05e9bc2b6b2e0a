"""Rate-limit masking: 429s absorbed by retries, so task success looks fine while latency climbs.

A logical call absorbed a 429 when one of its attempts failed with `rate_limited` and its last
attempt succeeded. Its latency is first start to last end: the price of the hidden 429s.
"""

from __future__ import annotations

from agentsla.queries.findings import evidence
from agentsla.queries.findings._finding import dur, hop_label, make_finding, pct
from agentsla.queries.store import ReadStore

TYPE = "rate_limit_masking"


def absorbed_rate_limits(store: ReadStore, params) -> list[dict]:
    """Answer: which hops had 429s that retries absorbed, and what did it cost in latency?

    Columns: hop_kind, hop_name, calls, masked_calls, absorbed_429s, masked_p99_ms,
    clean_p99_ms, masked_task_success (share of their tasks that succeeded or degraded),
    examples, first_ns, last_ns.
    """
    return evidence.ask(store, "absorbed_rate_limits", params)


def detect(store: ReadStore, params, th) -> list[dict]:
    """Find 429s hidden by retries."""
    found = []
    for row in absorbed_rate_limits(store, params):
        masked, clean = row["masked_p99_ms"], row["clean_p99_ms"]
        climbing = masked is not None and clean and masked >= th["rate_limit_p99_ratio"] * clean
        hint = (f"{hop_label(row)} absorbed {row['absorbed_429s']} 429s in "
                f"{row['masked_calls']} of {row['calls']} calls; their tasks still succeeded "
                f"({pct(row['masked_task_success'])}) but call p99 is {dur(masked)} vs "
                f"{dur(clean)} without 429s; raise the quota or shed load, honour Retry-After, "
                f"and alert on 429 rate, not only task success")
        found.append(make_finding(TYPE, "absorbed_429s", row,
                                  "critical" if climbing else "warning", hint))
    return found
