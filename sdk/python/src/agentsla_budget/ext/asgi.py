"""ASGI: a gateway middleware that sets each request's budget and answers 504 when it is spent."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Awaitable, Callable, Mapping

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.propagators.textmap import default_getter
from opentelemetry.trace import SpanKind

from agentsla_budget.budget import Budget, BudgetExhausted, with_budget
from agentsla_budget.hop import TRACER, mark_exhausted
from agentsla_budget.propagation import read_header

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def _headers(scope: Scope) -> dict[str, str]:
    return {key.decode("latin-1").lower(): value.decode("latin-1")
            for key, value in scope.get("headers", [])}


def spent_body(budget: Budget) -> bytes:
    """Return the JSON body of the 504 answered when budget is spent."""
    return json.dumps({
        "error": "budget_exhausted",
        "message": f"the request's time budget of {budget.total_ms:.0f} ms was spent before "
                   f"an answer was ready",
        "budget_ms": round(budget.total_ms), "task_id": budget.task_id}).encode()


async def _answer_504(send: Send, budget: Budget) -> None:
    await send({"type": "http.response.start", "status": 504,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": spent_body(budget)})


class BudgetMiddleware:
    """Give every HTTP request a budget: the inbound header's, capped by its route's default."""

    def __init__(self, app: App, default_ms: float, routes: Mapping[str, float] | None = None,
                 task_type: str | None = None, tenant_header: str | None = None,
                 tracer: trace.Tracer | None = None) -> None:
        """Wrap app; routes maps exact paths to their budget in ms (default_ms elsewhere)."""
        self.app, self.default_ms, self.routes = app, default_ms, dict(routes or {})
        self.task_type, self.tenant_header = task_type, tenant_header
        self.tracer = tracer or trace.get_tracer(TRACER)

    def budget_for(self, scope: Scope, headers: dict[str, str]) -> Budget:
        """Return the request's budget: what the caller has left, at most the route's."""
        limit = self.routes.get(scope["path"], self.default_ms)
        tenant = headers.get(self.tenant_header.lower()) if self.tenant_header else None
        wire = read_header(default_getter, headers)
        if wire is None or wire.remaining_ms >= limit:
            task_type = wire.task_type if wire and wire.task_type else self.task_type
            task_id = wire.task_id if wire else None
            return Budget.starting(limit, task_id=task_id, task_type=task_type, tenant=tenant)
        received = Budget.received(wire.remaining_ms, wire.task_id,
                                   wire.task_type or self.task_type)
        return Budget(received.deadline, received.total_ms, received.task_id, received.task_type,
                      tenant)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the request within its budget, or answer 504 once it is spent."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        budget = self.budget_for(scope, headers)
        token = otel_context.attach(with_budget(budget, propagate.extract(headers)))
        try:
            await self._serve(scope, receive, send, budget)
        finally:
            otel_context.detach(token)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, budget: Budget) -> None:
        with self.tracer.start_as_current_span(
                f"{scope['method']} {scope['path']}", kind=SpanKind.SERVER,
                attributes={"hop.kind": "gateway", "hop.timeout_ms": round(budget.total_ms, 1),
                            "http.request.method": scope["method"], "url.path": scope["path"]},
                record_exception=False, set_status_on_exception=False) as span:
            await self._run(scope, receive, send, budget, span)

    async def _run(self, scope: Scope, receive: Receive, send: Send, budget: Budget,
                   span: trace.Span) -> None:
        started = False

        async def watched(message: dict[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                span.set_attribute("http.response.status_code", message["status"])
            await send(message)

        try:
            async with asyncio.timeout(max(0.0, budget.remaining_ms()) / 1000):
                await self.app(scope, receive, watched)
        except (TimeoutError, BudgetExhausted) as error:
            if not (isinstance(error, BudgetExhausted) or budget.expired()):
                raise
            mark_exhausted(span, error if str(error) else BudgetExhausted("budget spent"))
            if not started:
                span.set_attribute("http.response.status_code", 504)
                await _answer_504(send, budget)
