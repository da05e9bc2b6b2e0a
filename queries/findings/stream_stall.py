"""Stream stall: streamed model calls whose first token came late (`ttft_ms` over the threshold).

Gaps between later tokens are not in the span contract's columns yet, so only the first token
is judged.
"""

from __future__ import annotations

from agentsla.queries.findings import evidence
from agentsla.queries.findings._finding import dur, hop_label, make_finding, pct
from agentsla.queries.store import ReadStore

TYPE = "stream_stall"


def slow_first_tokens(store: ReadStore, params) -> list[dict]:
    """Answer: which streamed models were slow to send their first token?

    Columns: hop_kind, hop_name, streamed_calls, stalled_calls, stalled_share, ttft_p50_ms,
    ttft_p95_ms, ttft_max_ms, stalled_then_timed_out, examples, first_ns, last_ns.
    """
    return evidence.ask(store, "slow_first_tokens", params)


def detect(store: ReadStore, params, th) -> list[dict]:
    """Find models whose streams stall before the first token."""
    found = []
    for row in slow_first_tokens(store, params):
        severity = "critical" if row["stalled_then_timed_out"] else "warning"
        hint = (f"{hop_label(row)}: {row['stalled_calls']} of {row['streamed_calls']} streamed "
                f"calls ({pct(row['stalled_share'])}) waited over "
                f"{dur(th['stream_stall_ttft_ms'])} for the first token (p95 "
                f"{dur(row['ttft_p95_ms'])}, max {dur(row['ttft_max_ms'])}); set a first-token "
                f"timeout below the read timeout and fail over when it fires")
        found.append(make_finding(TYPE, "slow_first_token", row, severity, hint))
    return found
