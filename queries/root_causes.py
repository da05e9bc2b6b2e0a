"""Root causes: a Pareto of first failing hops over the blamed tasks of a window.

Blamed tasks are finished tasks whose outcome is failed, degraded, budget_exhausted or rejected
(agentsla.contract.BLAMED_OUTCOMES), belonging to the window holding their end. Each is counted
under its first failing hop (ffh_kind, ffh_name, ffh_reason); tasks whose hop could not be
determined fall under nulls.

`seconds_lost` is the summed duration (seconds) of the affected tasks: the wall-clock time users
spent on tasks that then failed or were degraded because of that hop.
"""

from __future__ import annotations

from agentsla.queries._sql import task_filters
from agentsla.queries.rollup import MINUTE_NS, split, split_series
from agentsla.queries.store import ReadStore
from agentsla.queries.window import rfc3339

#: Examples are looked for in the window's last minutes first (the newest), then in all of it.
_RECENT_NS = 15 * MINUTE_NS
_EXAMPLES = 5


def root_causes(store: ReadStore, start_ns: int, end_ns: int, task_type: str | None = None,
                tenant_id: str | None = None, service_name: str | None = None,
                limit: int = 50, raw: bool = False) -> list[dict]:
    """Answer: which first failing hops caused the window's failed and degraded tasks?

    Rows, most tasks first (a Pareto): ffh_kind, ffh_name, ffh_reason, tasks, share (of the
    blamed tasks), cumulative_share, seconds_lost, one count per blamed outcome (failed,
    degraded, budget_exhausted, rejected) and example_task_ids (up to 5, newest first).
    """
    filters = task_filters(task_type, tenant_id, service_name)
    rows = store.rows("root_causes", {**split(start_ns, end_ns, raw), "limit": limit, **filters})
    return _with_examples(store, rows, start_ns, end_ns, filters)


def _with_examples(store: ReadStore, rows: list[dict], start_ns: int, end_ns: int,
                   filters: dict) -> list[dict]:
    """Add each cause's newest example task ids, read from the tasks of the window's end."""
    def key(row: dict) -> tuple:
        return row["ffh_kind"], row["ffh_name"], row["ffh_reason"]
    found: dict[tuple, list[str]] = {}
    for lo in (max(start_ns, end_ns - _RECENT_NS), start_ns):
        found = {key(r): r["example_task_ids"] for r in store.rows(
            "root_cause_examples", {"start_ns": lo, "end_ns": end_ns, **filters})}
        if all(len(found.get(key(r), ())) >= min(_EXAMPLES, r["tasks"]) for r in rows):
            break
    return [{**r, "example_task_ids": found.get(key(r), [])} for r in rows]


def root_cause_series(store: ReadStore, start_ns: int, end_ns: int, step_ns: int,
                      task_type: str | None = None, tenant_id: str | None = None,
                      service_name: str | None = None, raw: bool = False) -> list[dict]:
    """Answer: how did the first failing hops change over time, bucket by bucket of `step_ns`?

    Rows (buckets without blamed tasks are absent), oldest bucket first: bucket_ns, bucket
    (RFC 3339), ffh_kind, ffh_name, ffh_reason, tasks, seconds_lost, share (of the bucket's
    blamed tasks).
    """
    rows = store.rows("root_cause_series", {
        **split_series(start_ns, end_ns, step_ns, raw), "step_ns": step_ns,
        **task_filters(task_type, tenant_id, service_name)})
    return [{"bucket": rfc3339(r["bucket_ns"]), **r} for r in rows]
