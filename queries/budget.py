"""Where the budget went: each hop kind's self time in the window's finished tasks (a waterfall).

Tasks: finished in the window (by end), root arrived, cancelled and lost excluded. A task's self
time per hop kind is a fact materialization computes once and stores on the task row
(collector/tasks/self_time.py: the spans the root reaches, each clipped to its parent, minus the
union of its children; ghost work after the root ended is not budget spent). Parallel children
each keep their own self time, so with parallelism the kinds' shares can sum past 1; without it
they sum to exactly the task durations. Times are summed in whole microseconds.

Whole minutes are read from the rollups `budget_minutes` and `budget_hop_minutes`, the window's
edges from `tasks`; `raw=True` asks the same question over `tasks` only (the rollup check).
"""

from __future__ import annotations

from agentsla.queries._sql import task_filters
from agentsla.queries.rollup import split
from agentsla.queries.store import ReadStore


def _ratio(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def budget_waterfall(store: ReadStore, start_ns: int, end_ns: int, task_type: str | None = None,
                     tenant_id: str | None = None, service_name: str | None = None,
                     raw: bool = False) -> dict:
    """Answer: where did the budget of the tasks that finished in the window go, by hop kind?

    Returns {tasks, tasks_with_budget, avg_duration_ms, avg_budget_ms, unused_budget_share
    (1 - duration/budget over budgeted tasks), by_hop_kind: rows of hop_kind, tasks_with_hop,
    self_ms (total), avg_ms_per_task (over all the tasks), share_of_duration, share_of_budget
    (self time in budgeted tasks / their budgets)}, biggest kind first.
    """
    params = {**split(start_ns, end_ns, raw), **task_filters(task_type, tenant_id, service_name)}
    rows = store.rows("budget_waterfall", params)
    sums = rows[0]  # every row carries the window's totals
    tasks, budgeted, budget_us = sums["tasks"], sums["tasks_with_budget"], sums["budget_us"]
    kinds = [{"hop_kind": row["hop_kind"], "tasks_with_hop": row["tasks_with_hop"],
              "self_ms": row["self_us"] / 1000,
              "avg_ms_per_task": _ratio(row["self_us"] / 1000, tasks),
              "share_of_duration": _ratio(row["self_us"], sums["duration_us"]),
              "share_of_budget": _ratio(row["budgeted_self_us"], budget_us)}
             for row in rows if row["hop_kind"] is not None]
    unused = _ratio(sums["budgeted_duration_us"], budget_us)
    return {"tasks": tasks, "tasks_with_budget": budgeted,
            "avg_duration_ms": _ratio(sums["duration_us"] / 1000, tasks),
            "avg_budget_ms": _ratio(budget_us / 1000, budgeted),
            "unused_budget_share": None if unused is None else 1 - unused,
            "by_hop_kind": kinds}
