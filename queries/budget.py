"""Where the budget went: each hop kind's self time in the window's finished tasks (a waterfall).

Tasks: finished in the window (by end), root arrived, cancelled and lost excluded. Spans: those
reachable from the task's root through parent ids, each clipped to its parent's (clipped)
interval, the root to the task's; time after the root ended (ghost work) is not budget spent.
Self time of a span = its clipped duration minus the union of its children's clipped intervals
(exact, overlaps merged). Parallel children each keep their own self time, so with parallelism
the kinds' shares can sum past 1; without it they sum to exactly the task durations.
"""

from __future__ import annotations

from agentsla.queries._sql import task_filters
from agentsla.queries.store import ReadStore
from agentsla.queries.tasks import SPAN_SLACK_NS


def budget_waterfall(store: ReadStore, start_ns: int, end_ns: int, task_type: str | None = None,
                     tenant_id: str | None = None, service_name: str | None = None) -> dict:
    """Answer: where did the budget of the tasks that finished in the window go, by hop kind?

    Returns {tasks, tasks_with_budget, avg_duration_ms, avg_budget_ms, unused_budget_share
    (1 - duration/budget over budgeted tasks), by_hop_kind: rows of hop_kind, tasks_with_hop,
    self_ms (total), avg_ms_per_task (over all the tasks), share_of_duration, share_of_budget
    (self time in budgeted tasks / their budgets)}, biggest kind first.
    """
    params = {"start_ns": start_ns, "end_ns": end_ns,
              **task_filters(task_type, tenant_id, service_name)}
    (totals,) = store.rows("budget_totals", params)
    lo, hi, expected = (totals.pop(k) for k in ("first_start_ns", "last_end_ns", "span_count"))
    kinds = None
    if lo is not None and hi is not None and expected:
        # the tasks' spans start within their interval give or take skew and late work (see
        # queries.tasks._task_spans); trust the bounded read only if it found all of them
        kinds = store.rows("budget_waterfall", {
            **params, "lo_ns": lo - SPAN_SLACK_NS, "hi_ns": hi + SPAN_SLACK_NS})
        if not kinds or kinds[0]["found_spans"] != kinds[0]["expected_spans"]:
            kinds = None
    if kinds is None:
        kinds = store.rows("budget_waterfall", params, budget_span_bound="")
    for row in kinds:
        del row["found_spans"], row["expected_spans"]
    return {**totals, "by_hop_kind": kinds}
