"""Questions an incident asks of the read store, composed from the named questions of queries/.

The rates, Pareto and findings come from queries/ (sla, slo, root_causes, findings, spans); this
module shapes them for an incident: its scope, snapshot rates, and impact (outcomes,
error-budget minutes, ghost work).
"""

from __future__ import annotations

from typing import Any, Mapping

from agentsla.alerts.rules.samples import NS
from agentsla.config import Config
from agentsla.errors import NotOnThisStore
from agentsla.contract import FailingHop
from agentsla.queries.findings import resolve_thresholds
from agentsla.queries.findings import evidence
from agentsla.queries.findings.ghost_work import work_after_cutoff
from agentsla.queries.sla import RATED_OUTCOMES, sla_totals
from agentsla.queries.slo import budget_share, slo_window
from agentsla.queries.store import ReadStore

#: Labels that name the hop an alert is about, in order of preference.
_HOP_LABELS = ("hop_name", "model", "tool")


def scope_of(labels: Mapping[str, str], first_failing_hop: FailingHop | None = None) -> dict:
    """Return the query scope of an alert: task_type, tenant_id, hop_kind, hop_name (or None)."""
    scope: dict[str, Any] = {"task_type": labels.get("task_type") or None,
                             "tenant_id": labels.get("tenant_id") or None,
                             "hop_kind": labels.get("hop_kind") or None, "hop_name": None}
    scope["hop_name"] = next((labels[k] for k in _HOP_LABELS if labels.get(k)), None)
    if labels.get("model") and not scope["hop_kind"]:
        scope["hop_kind"] = "model"
    if labels.get("tool") and not scope["hop_kind"]:
        scope["hop_kind"] = "tool"
    if scope["hop_name"] is None and scope["hop_kind"] is None and first_failing_hop \
            and first_failing_hop.kind:
        scope["hop_kind"], scope["hop_name"] = first_failing_hop.kind, first_failing_hop.name
    return scope


def snapshot(store: ReadStore, config: Config, start_ns: int, end_ns: int,
             scope: Mapping[str, Any]) -> dict:
    """Answer: how are the scope's tasks doing right now? Rates and burn over [start, end).

    Keys: finished, success_rate, budget_exhausted_rate, fallback_rate (degraded), failed_rate,
    burn_rate (bad fraction / (1 - objective); the worst task type when unscoped).
    """
    totals = sla_totals(store, start_ns, end_ns, scope.get("task_type"), scope.get("tenant_id"))
    burns = [r["burn_rate"] for r in slo_window(store, config, start_ns, end_ns,
                                                 scope.get("task_type"))]
    return {"finished": totals["finished"], "success_rate": totals["success_rate"],
            "budget_exhausted_rate": totals["budget_exhausted_rate"],
            "fallback_rate": totals["degraded_rate"], "failed_rate": totals["failed_rate"],
            "burn_rate": max(burns) if burns else None}


def impact(store: ReadStore, config: Config, start_ns: int, end_ns: int,
           scope: Mapping[str, Any]) -> dict:
    """Answer: what did the incident cost between start and end?

    Keys: tasks (finished tasks by outcome in the scope), error_budget (per task type: tasks,
    bad, bad_fraction, minutes = bad fraction × incident minutes, share of the period's error
    budget) and ghost_work (seconds and tokens spent after callers gave up, all hops).
    """
    totals = sla_totals(store, start_ns, end_ns, scope.get("task_type"), scope.get("tenant_id"))
    minutes = max(0.0, (end_ns - start_ns) / NS / 60.0)
    budget = []
    for row in slo_window(store, config, start_ns, end_ns, scope.get("task_type")):
        fraction = row["bad_fraction"]
        budget.append({"task_type": row["task_type"], "tasks": row["total"], "bad": row["bad"],
                       "bad_fraction": fraction, "minutes": fraction * minutes,
                       "budget_share": budget_share(fraction, minutes,
                                                    config.slo_for(row["task_type"]))})
    budget.sort(key=lambda r: -r["minutes"])
    return {"tasks": {"finished": totals["finished"],
                      **{o: totals[o] for o in RATED_OUTCOMES}, "cancelled": totals["cancelled"]},
            "error_budget": budget, "ghost_work": ghost_work(store, config, start_ns, end_ns)}


def ghost_work(store: ReadStore, config: Config, start_ns: int, end_ns: int) -> dict:
    """Answer: how much work ran on after callers gave up in [start, end)? seconds, tokens, spans.

    All three are None on a store that does not run the findings detectors (docs/scale-out.md).
    """
    params = {"start_ns": start_ns, "end_ns": end_ns, **resolve_thresholds(config.findings)}
    try:
        # stored per-minute evidence for the window's clean minutes, raw rows for the rest
        params["evidence_plan"] = evidence.plan(store, start_ns, end_ns)
        rows = work_after_cutoff(store, params)
    except NotOnThisStore:  # a store without the detectors yet: unknown (n/a), not zero
        return {"seconds": None, "tokens": None, "spans": None}
    return {"seconds": float(sum(r["seconds_after"] or 0 for r in rows)),
            "tokens": int(sum(r["tokens_after"] or 0 for r in rows)),
            "spans": int(sum(r["spans"] or 0 for r in rows))}
