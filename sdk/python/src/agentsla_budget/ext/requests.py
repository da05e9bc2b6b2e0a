"""requests: an adapter that cuts every request's timeout to the budget and hands the budget on."""

from __future__ import annotations

import math
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from agentsla_budget.budget import current, timeout_for
from agentsla_budget.ext._headers import inject_headers

Timeout = float | tuple[float | None, float | None] | None


def clamp_timeout(timeout: Timeout, reserve_ms: float = 0) -> Timeout:
    """Return requests' timeout (None, seconds, or (connect, read)) cut to the budget."""
    def cut(value: float | None) -> float:
        return timeout_for(math.inf if value is None else value, reserve_ms=reserve_ms)
    if isinstance(timeout, tuple):
        return (cut(timeout[0]), cut(timeout[1]))
    return cut(timeout)


class BudgetAdapter(HTTPAdapter):
    """An HTTPAdapter whose requests fit the current budget (BudgetExhausted when none is left)."""

    def __init__(self, reserve_ms: float = 0, **kwargs: Any) -> None:
        """Create the adapter; kwargs go to HTTPAdapter."""
        self._reserve_ms = reserve_ms
        super().__init__(**kwargs)

    def send(self, request: requests.PreparedRequest, stream: bool = False,
             timeout: Timeout = None, **kwargs: Any) -> requests.Response:
        """Send request with its timeout cut to the budget and the budget header added."""
        if current() is not None:
            timeout = clamp_timeout(timeout, self._reserve_ms)
            inject_headers(request.headers)
        return super().send(request, stream=stream, timeout=timeout, **kwargs)


def budget_session(session: requests.Session | None = None,
                   reserve_ms: float = 0) -> requests.Session:
    """Return session (a new one by default) with BudgetAdapter mounted for http and https."""
    session = session or requests.Session()
    for prefix in ("http://", "https://"):
        session.mount(prefix, BudgetAdapter(reserve_ms=reserve_ms))
    return session
