"""A span processor that stamps the budget and the task on every span when it starts."""

from __future__ import annotations

from typing import Any

from opentelemetry.context import Context

from agentsla_budget.budget import Budget, current


def root_attributes(budget: Budget) -> dict[str, Any]:
    """Return the attributes a task's root span carries."""
    attributes: dict[str, Any] = {"budget.total_ms": round(budget.total_ms, 1)}
    if budget.task_type:
        attributes["task.type"] = budget.task_type
    if budget.tenant:
        attributes["tenant.id"] = budget.tenant
    return attributes


class BudgetSpanProcessor:
    """Stamp `task.id` and `budget.remaining_ms` on every span, and the budget on roots.

    It has the SDK's SpanProcessor methods, so `TracerProvider.add_span_processor` takes it,
    without this library importing the SDK.
    """

    def on_start(self, span: Any, parent_context: Context | None = None) -> None:
        """Stamp span with the budget of its parent context, when there is one."""
        budget = current(parent_context)
        if budget is None:
            return
        span.set_attribute("task.id", budget.task_id)
        span.set_attribute("budget.remaining_ms", round(budget.remaining_ms(), 1))
        if getattr(span, "parent", None) is None:
            span.set_attributes(root_attributes(budget))

    def _on_ending(self, span: Any) -> None:
        """Do nothing as the span ends (the SDK calls this before on_end)."""

    def on_end(self, span: Any) -> None:
        """Do nothing when the span has ended."""

    def shutdown(self) -> None:
        """Do nothing: the processor holds no resources."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Return True: nothing is buffered."""
        return True
