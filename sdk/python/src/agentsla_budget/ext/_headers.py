"""Outgoing headers shared by the HTTP integrations."""

from __future__ import annotations

from typing import MutableMapping

from opentelemetry import propagate

from agentsla_budget.budget import current
from agentsla_budget.propagation import outgoing
from agentsla_budget.wire import HEADER


def inject_headers(headers: MutableMapping[str, str]) -> None:
    """Add the trace context (global propagators) and the remaining budget to headers."""
    propagate.inject(headers)
    budget = current()
    if budget is not None:
        headers[HEADER] = outgoing(budget)
