"""Message headers: hand the budget through a queue, and refuse messages whose budget ran out."""

from __future__ import annotations

import contextlib
import time
from typing import Iterator, MutableMapping

from opentelemetry import context as otel_context
from opentelemetry import propagate
from opentelemetry.context import Context
from opentelemetry.propagators.textmap import default_getter

from agentsla_budget.budget import Budget, BudgetExhausted, current, with_budget
from agentsla_budget.propagation import outgoing, read_header
from agentsla_budget.wire import HEADER


class MessageExpired(BudgetExhausted):
    """Raise when a message's budget ran out while it waited in the queue."""


def _now_ms() -> float:
    return time.time() * 1000


def inject_message(headers: MutableMapping[str, str] | None = None) -> MutableMapping[str, str]:
    """Return headers with the trace context and the remaining budget, stamped with the time."""
    headers = {} if headers is None else headers
    propagate.inject(headers)
    budget = current()
    if budget is not None:
        headers[HEADER] = outgoing(budget, sent_ms=int(_now_ms()))
    return headers


def extract_message(headers: dict[str, str], enqueued_at: float | None = None) -> Context:
    """Return the context a message carries, its budget shortened by the time it waited.

    The wait is measured on wall clocks: from enqueued_at (the broker's unix time in seconds,
    when it gives one) or the producer's `sent-ms`, to now; a negative wait counts as none.
    """
    ctx = propagate.extract(headers)
    wire = read_header(default_getter, headers)
    if wire is None:
        return ctx
    sent_ms = enqueued_at * 1000 if enqueued_at is not None else wire.sent_ms
    waited_ms = max(0.0, _now_ms() - sent_ms) if sent_ms is not None else 0.0
    budget = Budget.received(wire.remaining_ms - waited_ms, wire.task_id, wire.task_type)
    return with_budget(budget, ctx)


def admit(headers: dict[str, str], enqueued_at: float | None = None,
          min_remaining_ms: float = 0) -> Context | None:
    """Return the message's context, or None when its budget is spent (drop the message)."""
    ctx = extract_message(headers, enqueued_at)
    budget = current(ctx)
    if budget is not None and budget.remaining_ms() <= min_remaining_ms:
        return None
    return ctx


@contextlib.contextmanager
def consume(headers: dict[str, str], enqueued_at: float | None = None,
            min_remaining_ms: float = 0) -> Iterator[Budget | None]:
    """Run the block in the message's context; fail fast with MessageExpired when it is spent."""
    ctx = admit(headers, enqueued_at, min_remaining_ms)
    if ctx is None:
        raise MessageExpired("the message's budget ran out while it waited in the queue")
    token = otel_context.attach(ctx)
    try:
        yield current(ctx)
    finally:
        otel_context.detach(token)
