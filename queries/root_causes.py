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
from agentsla.queries.store import ReadStore
from agentsla.queries.window import rfc3339


def root_causes(store: ReadStore, start_ns: int, end_ns: int, task_type: str | None = None,
                tenant_id: str | None = None, service_name: str | None = None,
                limit: int = 50) -> list[dict]:
    """Answer: which first failing hops caused the window's failed and degraded tasks?

    Rows, most tasks first (a Pareto): ffh_kind, ffh_name, ffh_reason, tasks, share (of the
    blamed tasks), cumulative_share, seconds_lost, one count per blamed outcome (failed,
    degraded, budget_exhausted, rejected) and example_task_ids (up to 5, newest first).
    """
    return store.rows("root_causes", {"start_ns": start_ns, "end_ns": end_ns, "limit": limit,
                                      **task_filters(task_type, tenant_id, service_name)})


def root_cause_series(store: ReadStore, start_ns: int, end_ns: int, step_ns: int,
                      task_type: str | None = None, tenant_id: str | None = None,
                      service_name: str | None = None) -> list[dict]:
    """Answer: how did the first failing hops change over time, bucket by bucket of `step_ns`?

    Rows (buckets without blamed tasks are absent), oldest bucket first: bucket_ns, bucket
    (RFC 3339), ffh_kind, ffh_name, ffh_reason, tasks, seconds_lost, share (of the bucket's
    blamed tasks).
    """
    rows = store.rows("root_cause_series", {
        "start_ns": start_ns, "end_ns": end_ns, "step_ns": step_ns,
        **task_filters(task_type, tenant_id, service_name)})
    return [{"bucket": rfc3339(r["bucket_ns"]), **r} for r in rows]
