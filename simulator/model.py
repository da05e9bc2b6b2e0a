"""Planned spans and tasks, and the ground truth derived from what the simulator decided.

The truth is not computed by classifying emitted spans: every failure is logged at the moment
the simulation decides it (`TaskPlan.fail`), with the logical call it belongs to, and the
outcome and first failing hop follow the product's definitions over that log (docs/simulator.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.trace import SpanKind


@dataclass(eq=False)
class SpanPlan:
    """One span to emit: virtual start/end (seconds since the anchor), ids, attributes."""

    name: str
    kind: str  # hop.kind
    hop_name: str
    start: float
    parent: SpanPlan | None
    span_kind: SpanKind = SpanKind.INTERNAL
    attrs: dict[str, Any] = field(default_factory=dict)
    end: float = math.nan
    span_id: int = 0
    depth: int = 0
    error: str | None = None
    message: str = ""
    exception: tuple[str, str] | None = None
    children: list[SpanPlan] = field(default_factory=list)

    def descendants_in_flight(self, t: float) -> list[SpanPlan]:
        """Descendants that started before t and end after it, deepest first."""
        found: list[SpanPlan] = []
        for child in self.children:
            if child.start < t < child.end:
                found.append(child)
            found.extend(child.descendants_in_flight(t))
        return sorted(found, key=lambda s: (-s.depth, -(s.end - s.start)))


@dataclass(eq=False)
class Call:
    """A logical call made of attempts; a later successful attempt recovers the earlier ones."""

    succeeded: bool = False


@dataclass(frozen=True)
class Failure:
    """A span the simulation made fail, and the logical call it was an attempt of."""

    span: SpanPlan
    reason: str
    call: Call | None

    @property
    def recovered(self) -> bool:
        """True when a later attempt of the same call succeeded."""
        return self.call is not None and self.call.succeeded


@dataclass(eq=False)
class TaskPlan:
    """Everything one task emits, plus what the simulator knows about it."""

    index: int
    task_id: str
    trace_id: int
    scenario: str
    task_type: str
    tenant: str
    budget_s: float
    spans: list[SpanPlan] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    findings: set[str] = field(default_factory=set)
    fallback_served: bool = False

    @property
    def root(self) -> SpanPlan:
        """The gateway span."""
        return self.spans[0]

    @property
    def deadline(self) -> float:
        """Virtual time at which the task's budget runs out."""
        return self.root.start + self.budget_s

    def fail(self, span: SpanPlan, end: float, reason: str, message: str = "",
             exception: tuple[str, str] | None = None, call: Call | None = None) -> None:
        """End a span as failed with `error.type` reason, and log the failure."""
        span.end, span.error, span.message, span.exception = end, reason, message, exception
        self.failures.append(Failure(span, reason, call))


def _budget_ran_out(task: TaskPlan, first: SpanPlan | None) -> bool:
    root = task.root
    flagged = [s for s in (root, first) if s is not None]
    if any(s.error == "budget_exhausted" or s.attrs.get("budget.exhausted") for s in flagged):
        return True
    if any(task.deadline <= s.start < root.end for s in task.spans):
        return True
    return (root.end - root.start) * 1000.0 > task.budget_s * 1000.0


def first_failure(task: TaskPlan) -> Failure | None:
    """The unrecovered failure that ended earliest (ties: the deeper span)."""
    live = [f for f in task.failures if not f.recovered]
    return min(live, key=lambda f: (f.span.end, -f.span.depth), default=None)


def first_failing_hop(task: TaskPlan) -> tuple[SpanPlan, str] | None:
    """The span blamed and the reason: descend to the deepest descendant still in flight."""
    first = first_failure(task)
    if first is None:
        return None
    waiting = first.span.descendants_in_flight(first.span.end)
    if not waiting:
        return first.span, first.reason
    blamed = waiting[0]
    return blamed, blamed.error or "timeout"


def outcome(task: TaskPlan) -> str:
    """The task outcome per the product's rules, from the simulator's own facts."""
    root = task.root
    if root.error in ("rejected", "cancelled"):
        return root.error
    blame = first_failing_hop(task)
    root_failed = root.error is not None
    if not root_failed and not task.fallback_served:
        return "success"
    if _budget_ran_out(task, blame[0] if blame else None):
        return "budget_exhausted"
    return "failed" if root_failed else "degraded"


def truth_record(task: TaskPlan, scenario_findings: tuple[str, ...]) -> dict[str, Any]:
    """The ground-truth JSON object of one task (see docs/simulator.md)."""
    result = outcome(task)
    blame = first_failing_hop(task) if result in ("failed", "degraded", "budget_exhausted",
                                                   "rejected") else None
    return {
        "type": "task",
        "task_id": task.task_id,
        "trace_id": f"{task.trace_id:032x}",
        "scenario": task.scenario,
        "task_type": task.task_type,
        "tenant": task.tenant,
        "outcome": result,
        "first_failing_hop": None if blame is None else {
            "kind": blame[0].kind, "name": blame[0].hop_name, "reason": blame[1]},
        "findings": sorted(task.findings),
        "scenario_findings": list(scenario_findings),
        "spans": len(task.spans),
        "ghost_spans": sum(1 for s in task.spans if s.end > task.root.end),
    }
