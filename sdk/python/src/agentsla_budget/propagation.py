"""An OpenTelemetry TextMapPropagator carrying the remaining budget, like gRPC's `grpc-timeout`."""

from __future__ import annotations

from typing import Any

from opentelemetry.context import Context
from opentelemetry.propagators.textmap import (CarrierT, Getter, Setter, TextMapPropagator,
                                               default_getter, default_setter)

from agentsla_budget.budget import Budget, current, with_budget
from agentsla_budget.wire import HEADER, WireBudget, decode, encode, remaining_to_send


def outgoing(budget: Budget, sent_ms: int | None = None) -> str:
    """Return the header value handing budget's remainder to the next hop."""
    return encode(WireBudget(remaining_ms=remaining_to_send(budget.remaining_ms()),
                             task_id=budget.task_id, task_type=budget.task_type, sent_ms=sent_ms))


def read_header(getter: Getter[Any], carrier: Any) -> WireBudget | None:
    """Return the decoded budget header of carrier, if present and valid."""
    values = getter.get(carrier, HEADER)
    return decode(values[0]) if values else None


class BudgetPropagator(TextMapPropagator):
    """Inject and extract the `agentsla-budget` header (entry point name: agentsla_budget)."""

    def extract(self, carrier: CarrierT, context: Context | None = None,
                getter: Getter[CarrierT] = default_getter) -> Context:
        """Return context with the budget the carrier hands on, as a deadline from now."""
        wire = read_header(getter, carrier)
        if wire is None:
            return context if context is not None else Context()
        return with_budget(Budget.received(wire.remaining_ms, wire.task_id, wire.task_type),
                           context)

    def inject(self, carrier: CarrierT, context: Context | None = None,
               setter: Setter[CarrierT] = default_setter) -> None:
        """Write the remaining budget of context into carrier, when there is one."""
        budget = current(context)
        if budget is not None:
            setter.set(carrier, HEADER, outgoing(budget))

    @property
    def fields(self) -> set[str]:
        """Return the header names this propagator writes."""
        return {HEADER}
