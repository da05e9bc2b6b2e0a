"""httpx: a transport that cuts every request's timeouts to the budget and hands the budget on."""

from __future__ import annotations

import math

import httpx

from agentsla_budget.budget import current, timeout_for
from agentsla_budget.ext._headers import inject_headers


def clamp_request(request: httpx.Request, reserve_ms: float = 0) -> None:
    """Cut request's connect/read/write/pool timeouts to the budget; add the budget header."""
    if current() is None:
        return
    timeouts = dict(request.extensions.get("timeout") or {})
    for phase in ("connect", "read", "write", "pool"):
        configured = timeouts.get(phase)
        timeouts[phase] = timeout_for(math.inf if configured is None else configured,
                                      reserve_ms=reserve_ms)
    request.extensions["timeout"] = timeouts
    inject_headers(request.headers)


class BudgetTransport(httpx.BaseTransport):
    """Wrap a transport so each request fits the budget (BudgetExhausted when none is left)."""

    def __init__(self, transport: httpx.BaseTransport | None = None, reserve_ms: float = 0) -> None:
        """Wrap transport (a new HTTPTransport by default)."""
        self._inner = transport or httpx.HTTPTransport()
        self._reserve_ms = reserve_ms

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send request with its timeouts cut to the budget."""
        clamp_request(request, self._reserve_ms)
        return self._inner.handle_request(request)

    def close(self) -> None:
        """Close the wrapped transport."""
        self._inner.close()


class AsyncBudgetTransport(httpx.AsyncBaseTransport):
    """The async twin of BudgetTransport."""

    def __init__(self, transport: httpx.AsyncBaseTransport | None = None,
                 reserve_ms: float = 0) -> None:
        """Wrap transport (a new AsyncHTTPTransport by default)."""
        self._inner = transport or httpx.AsyncHTTPTransport()
        self._reserve_ms = reserve_ms

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send request with its timeouts cut to the budget."""
        clamp_request(request, self._reserve_ms)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        """Close the wrapped transport."""
        await self._inner.aclose()
