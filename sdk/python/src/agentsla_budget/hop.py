"""One call to a dependency as a span: its kind, the timeout the budget gave it, its attempt."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any, Iterator

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from agentsla_budget.budget import BudgetExhausted, expired, timeout_for

TRACER = "agentsla_budget"


@dataclass(frozen=True)
class Hop:
    """The span of a call and the timeout it may use."""

    span: trace.Span
    timeout_s: float


def mark_exhausted(span: trace.Span, error: BaseException) -> None:
    """Record on span that it was cut short or skipped for lack of budget."""
    span.set_attribute("budget.exhausted", True)
    span.set_attribute("error.type", "budget_exhausted")
    span.set_status(Status(StatusCode.ERROR, str(error)))


@contextlib.contextmanager
def hop(name: str, kind: str, configured_s: float, attempts: int = 1, reserve_ms: float = 0,
        attributes: dict[str, Any] | None = None,
        tracer: trace.Tracer | None = None) -> Iterator[Hop]:
    """Run a call in a span stamped with `hop.kind` and the `hop.timeout_ms` chosen from the budget.

    With nothing left, the span is recorded as exhausted and BudgetExhausted raised.
    """
    tracer = tracer or trace.get_tracer(TRACER)
    with tracer.start_as_current_span(name, kind=SpanKind.CLIENT, attributes={
            "hop.kind": kind, **(attributes or {})}, record_exception=False,
            set_status_on_exception=False) as span:
        try:
            timeout_s = timeout_for(configured_s, attempts, reserve_ms)
        except BudgetExhausted as error:
            mark_exhausted(span, error)
            raise
        span.set_attribute("hop.timeout_ms", round(timeout_s * 1000, 1))
        try:
            yield Hop(span=span, timeout_s=timeout_s)
        except BaseException as error:
            span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
            if isinstance(error, BudgetExhausted) or (
                    isinstance(error, asyncio.CancelledError) and expired()):
                mark_exhausted(span, error)  # cancelled because the budget ran out
            span.record_exception(error)
            raise
