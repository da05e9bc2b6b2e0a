"""The per-task planning context: span factory, randomness, budget and the scenario's world."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from opentelemetry.trace import SpanKind

from agentsla.simulator.model import Call, SpanPlan, TaskPlan
from agentsla.simulator.scenarios import Profile
from agentsla.simulator.world import World

#: Seconds a budget-aware caller keeps in hand for answering after its callees.
RESERVE_S = 1.0


@dataclass
class Builder:
    """Creates the spans of one task and holds what its planning needs."""

    task: TaskPlan
    profile: Profile
    world: World
    rng: random.Random
    ids: random.Random
    segment_start: float
    segment_length: float | None

    def u(self, low: float, high: float) -> float:
        """Draw uniformly from [low, high]."""
        return self.rng.uniform(low, high)

    def phase(self, t: float) -> float:
        """Fraction of the current schedule segment elapsed at virtual time t."""
        if not self.segment_length:
            return 0.0
        return min(1.0, max(0.0, (t - self.segment_start) / self.segment_length))

    def remaining(self, t: float) -> float:
        """Seconds of budget left at virtual time t (negative past the deadline)."""
        return self.task.deadline - t

    def span(self, parent: SpanPlan | None, name: str, kind: str, start: float,
             hop_name: str | None = None, span_kind: SpanKind = SpanKind.INTERNAL,
             **attrs: Any) -> SpanPlan:
        """Plan a span; every span carries hop.kind and budget.remaining_ms."""
        span = SpanPlan(name, kind, hop_name or name, start, parent, span_kind, dict(attrs))
        span.span_id = self.ids.getrandbits(64) or 1
        span.depth = parent.depth + 1 if parent else 0
        span.attrs["hop.kind"] = kind
        left = self.task.budget_s if parent is None else self.remaining(start)
        # ceil keeps any budget left positive (>= 1 ms) and none left <= 0.
        span.attrs["budget.remaining_ms"] = int(math.ceil(left * 1000.0))
        if parent is not None:
            parent.children.append(span)
        self.task.spans.append(span)
        return span

    def fail(self, span: SpanPlan, end: float, reason: str, message: str = "",
             exception: tuple[str, str] | None = None, call: Call | None = None,
             http_status: int | None = None) -> None:
        """End a span as failed; its failure goes into the task's failure log."""
        if http_status is not None:
            span.attrs["http.response.status_code"] = http_status
        self.task.fail(span, end, reason, message, exception, call)

    def fitted_timeout(self, configured: float, t: float, attempts: int = 1) -> float:
        """The timeout a budget-aware client uses: configured, cut so all attempts fit."""
        if not self.profile.budget_aware or configured <= 0:
            return configured
        share = (self.remaining(t) - RESERVE_S) / attempts
        return max(0.05, min(configured, share))
