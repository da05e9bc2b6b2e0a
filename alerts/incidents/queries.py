"""Read-side questions an incident asks of DuckDB, over the views `spans` and `tasks`.

The rates, Pareto and findings come from queries/ (sla, root_causes, findings); the questions
only incidents ask live here, as alerts/metrics.py does for the alert metrics: when the impact
started, its snapshot rates, and its impact (outcomes, error-budget minutes, ghost work).
"""

from __future__ import annotations

from typing import Any, Mapping

from agentsla.alerts.rules.source import slo_window_counts
from agentsla.alerts.rules.samples import NS
from agentsla.config import Config
from agentsla.queries._sql import fetch_dicts

_FIRST_FAILING_SPAN_SQL = """
select min(s.end_ns) as first_ns
from spans s
join tasks t on t.task_id = s.task_id
where s.is_error
  and s.end_ns >= $start_ns and s.end_ns < $end_ns
  and ($task_type is null or t.task_type = $task_type)
  and ($tenant_id is null or t.tenant_id = $tenant_id)
  and ($hop_kind is null or s.hop_kind = $hop_kind)
  and ($hop_name is null or s.hop_name = $hop_name)
"""

#: Labels that name the hop an alert is about, in order of preference.
_HOP_LABELS = ("hop_name", "model", "tool")


def scope_of(labels: Mapping[str, str], first_failing_hop: str | None = None) -> dict:
    """Return the query scope of an alert: task_type, tenant_id, hop_kind, hop_name (or None)."""
    scope: dict[str, Any] = {"task_type": labels.get("task_type") or None,
                             "tenant_id": labels.get("tenant_id") or None,
                             "hop_kind": labels.get("hop_kind") or None, "hop_name": None}
    scope["hop_name"] = next((labels[k] for k in _HOP_LABELS if labels.get(k)), None)
    if labels.get("model") and not scope["hop_kind"]:
        scope["hop_kind"] = "model"
    if labels.get("tool") and not scope["hop_kind"]:
        scope["hop_kind"] = "tool"
    if scope["hop_name"] is None and scope["hop_kind"] is None and first_failing_hop:
        kind, _, rest = first_failing_hop.partition(" ")
        name = rest.split(" (")[0]
        if kind and name and kind not in ("unknown", "?"):
            scope["hop_kind"], scope["hop_name"] = kind, (None if name == "?" else name)
    return scope


def first_failing_span_ns(cur, start_ns: int, end_ns: int, scope: Mapping[str, Any]) -> int | None:
    """Answer: when did the first span in the scope fail, in [start_ns, end_ns)?

    Returns the earliest end_ns of a failing span (ERROR or error.type) among the scope's tasks
    (task_type, tenant_id) and hop (hop_kind, hop_name), or None.
    """
    rows = fetch_dicts(cur, _FIRST_FAILING_SPAN_SQL, {"start_ns": start_ns, "end_ns": end_ns,
                                                      **_scope_params(scope)})
    return rows[0]["first_ns"] if rows else None


def _scope_params(scope: Mapping[str, Any]) -> dict:
    return {k: scope.get(k) for k in ("task_type", "tenant_id", "hop_kind", "hop_name")}


def snapshot(cur, config: Config, start_ns: int, end_ns: int, scope: Mapping[str, Any]) -> dict:
    """Answer: how are the scope's tasks doing right now? Rates and burn over [start, end).

    Keys: finished, success_rate, budget_exhausted_rate, fallback_rate (degraded), failed_rate,
    burn_rate (bad fraction / (1 - objective); the worst task type when unscoped).
    """
    from agentsla.queries.sla import sla_totals

    totals = sla_totals(cur, start_ns, end_ns, scope.get("task_type"), scope.get("tenant_id"))
    burns = [_burn(config, r) for r in slo_window_counts(cur, start_ns, end_ns,
                                                          scope.get("task_type")) if r["total"]]
    return {"finished": totals["finished"], "success_rate": totals["success_rate"],
            "budget_exhausted_rate": totals["budget_exhausted_rate"],
            "fallback_rate": totals["degraded_rate"], "failed_rate": totals["failed_rate"],
            "burn_rate": max(burns) if burns else None}


def _burn(config: Config, row: Mapping) -> float:
    slo = config.slo_for(row["task_type"])
    good = row["success"] + (row["degraded"] if slo.degraded_is_good else 0)
    return (row["total"] - good) / row["total"] / (1 - slo.objective)


def impact(cur, config: Config, start_ns: int, end_ns: int, scope: Mapping[str, Any]) -> dict:
    """Answer: what did the incident cost between start and end?

    Keys: tasks (finished tasks by outcome in the scope), error_budget (per task type: tasks,
    bad, bad_fraction, minutes = bad fraction × incident minutes, share of the period's error
    budget) and ghost_work (seconds and tokens spent after callers gave up, all hops).
    """
    from agentsla.queries.sla import RATED_OUTCOMES, sla_totals

    totals = sla_totals(cur, start_ns, end_ns, scope.get("task_type"), scope.get("tenant_id"))
    minutes = max(0.0, (end_ns - start_ns) / NS / 60.0)
    budget = []
    for row in slo_window_counts(cur, start_ns, end_ns, scope.get("task_type")):
        if not row["total"]:
            continue
        slo = config.slo_for(row["task_type"])
        good = row["success"] + (row["degraded"] if slo.degraded_is_good else 0)
        bad_fraction = (row["total"] - good) / row["total"]
        allowed = (1 - slo.objective) * slo.period / 60.0
        budget.append({"task_type": row["task_type"], "tasks": row["total"],
                       "bad": row["total"] - good, "bad_fraction": bad_fraction,
                       "minutes": bad_fraction * minutes,
                       "budget_share": bad_fraction * minutes / allowed if allowed else None})
    budget.sort(key=lambda r: -r["minutes"])
    return {"tasks": {"finished": totals["finished"],
                      **{o: totals[o] for o in RATED_OUTCOMES}, "cancelled": totals["cancelled"]},
            "error_budget": budget, "ghost_work": ghost_work(cur, config, start_ns, end_ns)}


def ghost_work(cur, config: Config, start_ns: int, end_ns: int) -> dict:
    """Answer: how much work ran on after callers gave up in [start, end)? seconds, tokens, spans."""
    from agentsla.queries.findings import resolve_thresholds
    from agentsla.queries.findings.ghost_work import work_after_cutoff

    params = {"start_ns": start_ns, "end_ns": end_ns, **resolve_thresholds(config.findings)}
    rows = work_after_cutoff(cur, params)
    return {"seconds": float(sum(r["seconds_after"] or 0 for r in rows)),
            "tokens": int(sum(r["tokens_after"] or 0 for r in rows)),
            "spans": int(sum(r["spans"] or 0 for r in rows))}
