"""openai: a client whose timeout and max_retries fit the budget left, with the budget header."""

from __future__ import annotations

import math
from typing import Any, TypeVar

from agentsla_budget.budget import attempts_that_fit, current, timeout_for
from agentsla_budget.propagation import outgoing
from agentsla_budget.wire import HEADER

Client = TypeVar("Client")
# openai's own backoff between retries: 0.5 s doubling, at most 8 s (openai._constants).
_FIRST_WAIT_S, _MAX_WAIT_S = 0.5, 8.0


def configured_timeout_s(timeout: Any) -> float:
    """Return the per-attempt seconds of an openai timeout (a number, a Timeout, or None)."""
    if timeout is None:
        return math.inf
    if isinstance(timeout, (int, float)):
        return float(timeout)
    read = getattr(timeout, "read", None)
    return math.inf if read is None else float(read)


def budgeted(client: Client, reserve_ms: float = 0) -> Client:
    """Return client.with_options(...) for one request: timeout and max_retries fit what is left.

    The client's own timeout and max_retries are the most it may use; the attempts kept are those
    that fit in full with openai's backoff between them (at least one, given what is left).
    BudgetExhausted when nothing is left. Without a budget the client is returned unchanged.
    """
    budget = current()
    if budget is None:
        return client
    configured = configured_timeout_s(client.timeout)  # type: ignore[attr-defined]
    retries = client.max_retries  # type: ignore[attr-defined]
    waits = [min(_FIRST_WAIT_S * 2 ** retry, _MAX_WAIT_S) for retry in range(retries)]
    attempts = max(1, attempts_that_fit(configured, retries + 1, waits, reserve_ms))
    timeout = timeout_for(configured, attempts, reserve_ms)
    options = {"timeout": timeout, "max_retries": attempts - 1,
               "default_headers": {HEADER: outgoing(budget)}}
    return client.with_options(**options)  # type: ignore[attr-defined]
