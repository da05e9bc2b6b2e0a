"""The task budget: a deadline on the local monotonic clock, kept in the OpenTelemetry context."""

from __future__ import annotations

import contextlib
import math
import time
import uuid
from dataclasses import dataclass, field
from opentelemetry import context as otel_context

_KEY = otel_context.create_key("agentsla-budget")


class BudgetExhausted(Exception):
    """Raise when a task's time budget has nothing left for the work asked of it."""


@dataclass(frozen=True)
class Budget:
    """One task's budget: its absolute monotonic deadline and who it belongs to."""

    deadline: float
    total_ms: float
    task_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    task_type: str | None = None
    tenant: str | None = None

    @classmethod
    def starting(cls, total_ms: float, **who: str | None) -> "Budget":
        """Return a budget of total_ms starting now."""
        return cls(deadline=time.monotonic() + total_ms / 1000, total_ms=total_ms,
                   **{k: v for k, v in who.items() if v is not None})

    @classmethod
    def received(cls, remaining_ms: float, task_id: str | None = None,
                 task_type: str | None = None) -> "Budget":
        """Return the budget a caller handed on, remaining_ms from now."""
        return cls(deadline=time.monotonic() + remaining_ms / 1000, total_ms=remaining_ms,
                   task_id=task_id or uuid.uuid4().hex, task_type=task_type)

    def remaining_ms(self) -> float:
        """Return the milliseconds left before the deadline (negative once it passed)."""
        return (self.deadline - time.monotonic()) * 1000

    def expired(self) -> bool:
        """Tell whether the deadline has passed."""
        return self.remaining_ms() <= 0


def current(ctx: otel_context.Context | None = None) -> Budget | None:
    """Return the budget of the current (or given) context, if any."""
    return otel_context.get_value(_KEY, ctx)


def with_budget(budget: Budget, ctx: otel_context.Context | None = None) -> otel_context.Context:
    """Return a context carrying budget."""
    return otel_context.set_value(_KEY, budget, ctx)


class task(contextlib.ContextDecorator):
    """Set a task's budget for a block or a function: `with task(total_ms=60000, ...)`."""

    def __init__(self, total_ms: float, task_id: str | None = None, task_type: str | None = None,
                 tenant: str | None = None) -> None:
        """Remember the budget to start on entry."""
        if not total_ms > 0:
            raise ValueError(f"total_ms must be positive, got {total_ms!r}")
        self._args = {"task_id": task_id, "task_type": task_type, "tenant": tenant}
        self._total_ms = total_ms
        self._tokens: list[object] = []

    def __enter__(self) -> Budget:
        """Start the budget now and make it current."""
        budget = Budget.starting(self._total_ms, **self._args)
        self._tokens.append(otel_context.attach(with_budget(budget)))
        return budget

    def __exit__(self, *exc: object) -> None:
        """Restore the previous budget."""
        otel_context.detach(self._tokens.pop())


def _required() -> Budget:
    budget = current()
    if budget is None:
        raise LookupError("no task budget is set here: use agentsla_budget.task(...)")
    return budget


def remaining_ms() -> float:
    """Return the milliseconds left in the current task's budget (infinite without one)."""
    budget = current()
    return math.inf if budget is None else budget.remaining_ms()


def deadline() -> float:
    """Return the current task's deadline on the time.monotonic() clock."""
    return _required().deadline


def expired() -> bool:
    """Tell whether the current task's budget has run out (False without one)."""
    budget = current()
    return budget is not None and budget.expired()


def timeout_for(configured_s: float, attempts: int = 1, reserve_ms: float = 0) -> float:
    """Return the seconds a hop may wait: at most configured_s and its share of what is left."""
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, got {attempts!r}")
    left_ms = remaining_ms() - reserve_ms
    if left_ms <= 0:
        raise BudgetExhausted(f"no budget left for this hop ({left_ms:.0f} ms after the "
                              f"{reserve_ms:.0f} ms reserve)")
    return min(configured_s, left_ms / 1000 / attempts)


def attempts_that_fit(configured_s: float, attempts: int, backoff_s: list[float],
                      reserve_ms: float = 0) -> int:
    """Return how many full attempts of configured_s, with the waits between them, still fit."""
    left_s = (remaining_ms() - reserve_ms) / 1000
    fit = 0
    while fit < attempts and (fit + 1) * configured_s + sum(backoff_s[:fit]) <= left_s:
        fit += 1
    return fit
