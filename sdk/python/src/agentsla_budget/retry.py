"""Retries that respect the budget: backoff with jitter, and no attempt that cannot fit."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from opentelemetry import trace

from agentsla_budget.budget import BudgetExhausted, attempts_that_fit
from agentsla_budget.hop import hop

T = TypeVar("T")
_TRANSIENT_NAMES = ("timeout", "connect", "ratelimit", "serviceunavailable", "internalserver",
                    "badgateway")


def transient(error: BaseException) -> bool:
    """Tell whether error is worth another attempt: timeouts, connection errors, 429s and 5xx."""
    if isinstance(error, BudgetExhausted):
        return False
    name = type(error).__name__.lower()
    return isinstance(error, (TimeoutError, ConnectionError)) or any(
        part in name for part in _TRANSIENT_NAMES)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry."""

    attempts: int = 3
    backoff_s: float = 0.5
    multiplier: float = 2.0
    max_backoff_s: float = 8.0
    jitter: float = 0.25  # each wait is shortened by up to this share, at random
    retry_on: Callable[[BaseException], bool] = field(default=transient)

    def __post_init__(self) -> None:
        """Refuse a policy that cannot run."""
        if self.attempts < 1 or self.backoff_s < 0 or not 0 <= self.jitter <= 1:
            raise ValueError(f"invalid retry policy {self!r}")

    def wait_s(self, retry: int) -> float:
        """Return the longest wait before retry number `retry` (1 for the first retry)."""
        return min(self.backoff_s * self.multiplier ** (retry - 1), self.max_backoff_s)

    def waits_after(self, attempt: int) -> list[float]:
        """Return the longest waits between the attempts after `attempt`."""
        return [self.wait_s(retry) for retry in range(attempt + 1, self.attempts)]


def call_with_retries(fn: Callable[[float], T], *, name: str, kind: str, configured_s: float,
                      policy: RetryPolicy = RetryPolicy(), idempotent: bool = True,
                      idempotency_key: str | None = None, reserve_ms: float = 0,
                      attributes: dict[str, Any] | None = None,
                      tracer: trace.Tracer | None = None,
                      sleep: Callable[[float], None] = time.sleep) -> T:
    """Return fn(timeout_s), retried as policy says while another full attempt fits the budget.

    Each attempt is a span with `retry.attempt`, `retry.max` (the retries the budget still allows)
    and `hop.timeout_ms`. A non-idempotent call is tried once unless it has an idempotency key.
    When the next attempt cannot fit, BudgetExhausted is raised from the last error.
    """
    allowed = policy.attempts if idempotent or idempotency_key else 1
    extra = dict(attributes or {})
    if idempotency_key:
        extra["idempotency.key"] = idempotency_key
    attempt = 0
    while True:
        fit = attempts_that_fit(configured_s, allowed - attempt, policy.waits_after(attempt),
                                reserve_ms)
        planned = max(fit, 1)  # a first attempt may use what is left, even if short
        try:
            with hop(name, kind, configured_s, planned, reserve_ms, tracer=tracer, attributes={
                    **extra, "retry.attempt": attempt, "retry.max": attempt + planned - 1}) as call:
                return fn(call.timeout_s)
        except Exception as error:
            if not policy.retry_on(error) or attempt + 1 >= allowed:
                raise
            last = error
        wait_ms = policy.wait_s(attempt + 1) * (1 - policy.jitter * random.random()) * 1000
        if not attempts_that_fit(configured_s, 1, [], reserve_ms + wait_ms):
            raise BudgetExhausted(f"{name}: no time for retry {attempt + 1} of {allowed - 1} "
                                  f"({configured_s:g} s attempt after a {wait_ms:.0f} ms wait)"
                                  ) from last
        sleep(wait_ms / 1000)
        attempt += 1
