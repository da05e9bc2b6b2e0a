"""Duplicate side effect: one idempotency key executed successfully more than once by a hop.

Every successful execution of a key that had one ending in the window is counted, also those
up to `duplicate_lookback_s` (24 h) before the window, so a duplicate straddling the window's
start is still found, and the spans read stay bounded however long the store keeps them. The
candidate keys come from each key's executions per minute, which the evidence worker stores
(evidence.KEY_COUNTS, on DuckDB): a day of keys is read from them, not from the day's spans;
only the candidates' executions are read from spans. A span carrying
another span of the same hop and key (a tool's client span and its own server span) is not an
execution of its own: only the innermost spans of a key's chain count, so one call seen from both
sides is one execution, while two server executions under one client call are a duplicate.
"""

from __future__ import annotations

from agentsla.queries.findings import evidence
from agentsla.queries.findings._finding import hop_label, make_finding
from agentsla.queries.store import ReadStore

TYPE = "duplicate_side_effect"


def duplicate_executions(store: ReadStore, params) -> list[dict]:
    """Answer: which hops executed one idempotency key successfully more than once?

    Columns: hop_kind, hop_name, duplicated_keys, extra_executions, max_executions,
    keys_across_tasks, examples, first_ns, last_ns.
    """
    if evidence.KEY_COUNTS not in evidence.STORED[store.dialect]:
        return store.rows("findings/duplicate_executions", params)  # one pass over raw rows
    lookback_ns = round(params["duplicate_lookback_s"] * 1e9)
    evidence.gather_keys(store, params, params["start_ns"] - lookback_ns)
    keys = [row["key_hash"] for row in store.rows("findings/duplicate_keys", params)]
    if not keys:  # the usual answer: no key executed twice, no raw row to read
        return []
    return store.rows("findings/duplicate_executions", {**params, "key_hashes": keys})


def detect(store: ReadStore, params, th) -> list[dict]:
    """Find side effects that ran twice despite an idempotency key."""
    found = []
    for row in duplicate_executions(store, params):
        hint = (f"{hop_label(row)} executed {row['duplicated_keys']} idempotency key(s) "
                f"successfully more than once ({row['extra_executions']} extra, up to "
                f"{row['max_executions']}×): store each key with its result and return the stored "
                f"result on a repeat, and do not retry after a timeout without checking the key")
        found.append(make_finding(TYPE, "key_executed_twice", row, "critical", hint))
    return found
