"""The ASGI gateway middleware under uvicorn: budget per request, 504 once it is spent."""

from __future__ import annotations

import asyncio
import time
from typing import Iterator

import httpx
import pytest
from budgetkit import Spans, asgi_server
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import agentsla_budget as budget
from agentsla_budget.ext.asgi import BudgetMiddleware

CANCELLED: list[str] = []


async def whoami(request: Request) -> JSONResponse:
    """Answer with the budget the handler sees."""
    current = budget.current()
    return JSONResponse({"remaining_ms": budget.remaining_ms(), "task_id": current.task_id,
                         "task_type": current.task_type})


async def slow(request: Request) -> JSONResponse:
    """Work for 10 s, noting when the gateway cancels it."""
    try:
        await asyncio.sleep(10)
    except asyncio.CancelledError:
        CANCELLED.append(request.url.path)
        raise
    return JSONResponse({})  # pragma: no cover


async def slow_hop(request: Request) -> JSONResponse:
    """Wait 10 s on a tool inside a hop, which the gateway cancels when the budget runs out."""
    with budget.hop("search", "tool", configured_s=30, tracer=request.app.state.tracer):
        await asyncio.sleep(10)
    return JSONResponse({})  # pragma: no cover


async def spent(request: Request) -> JSONResponse:
    """Fail for lack of budget, as a hop inside the gateway would."""
    raise budget.BudgetExhausted("the search tool had no time left")


@pytest.fixture
def gateway(spans: Spans) -> Iterator[str]:
    """A Starlette gateway with BudgetMiddleware (800 ms, /long 3 s) under uvicorn."""
    app = Starlette(routes=[Route(path, endpoint) for path, endpoint in (
        ("/whoami", whoami), ("/long", whoami), ("/slow", slow), ("/slow-hop", slow_hop),
        ("/spent", spent))],
        middleware=[Middleware(BudgetMiddleware, default_ms=800, routes={"/long": 3000},
                               task_type="answer", tracer=spans.tracer)])
    app.state.tracer = spans.tracer
    with asgi_server(app) as url:
        yield url


def test_a_request_without_a_header_gets_its_routes_default(gateway: str) -> None:
    assert 0 < httpx.get(f"{gateway}/whoami").json()["remaining_ms"] <= 800
    body = httpx.get(f"{gateway}/long").json()
    assert 800 < body["remaining_ms"] <= 3000 and body["task_type"] == "answer"


def test_the_callers_budget_and_task_are_taken_from_the_header(gateway: str) -> None:
    headers = {budget.HEADER: "remaining-ms=300;task-id=g-1;task-type=search"}
    body = httpx.get(f"{gateway}/long", headers=headers).json()
    assert 0 < body["remaining_ms"] <= 300
    assert (body["task_id"], body["task_type"]) == ("g-1", "search")


def test_a_callers_budget_never_exceeds_the_routes(gateway: str) -> None:
    headers = {budget.HEADER: "remaining-ms=60000;task-id=g-2"}
    body = httpx.get(f"{gateway}/whoami", headers=headers).json()
    assert body["remaining_ms"] <= 800 and body["task_id"] == "g-2"


def test_a_spent_budget_answers_504_in_time_and_cancels_the_work(
        gateway: str, spans: Spans) -> None:
    started = time.monotonic()
    response = httpx.get(f"{gateway}/slow", timeout=10)
    assert time.monotonic() - started < 5  # the handler wanted 10 s
    assert response.status_code == 504
    body = response.json()
    assert body["error"] == "budget_exhausted" and body["budget_ms"] == 800
    assert "800 ms was spent" in body["message"]
    assert CANCELLED == ["/slow"]
    root = spans.one("GET /slow")
    assert root.attributes["hop.kind"] == "gateway"
    assert root.attributes["http.response.status_code"] == 504
    assert root.attributes["error.type"] == "budget_exhausted"
    assert root.attributes["budget.total_ms"] == 800
    assert root.attributes["task.id"] == body["task_id"]


def test_a_hop_cut_short_by_the_gateway_is_recorded_as_exhausted(
        gateway: str, spans: Spans) -> None:
    assert httpx.get(f"{gateway}/slow-hop", timeout=10).status_code == 504
    hop = spans.one("search")
    assert hop.attributes["budget.exhausted"] is True
    assert hop.attributes["error.type"] == "budget_exhausted"
    assert hop.attributes["hop.timeout_ms"] <= 800  # the tool's 30 s, cut to the budget


def test_budget_exhausted_inside_the_app_answers_504(gateway: str) -> None:
    response = httpx.get(f"{gateway}/spent", headers={budget.HEADER: "remaining-ms=500"})
    assert response.status_code == 504 and response.json()["budget_ms"] == 500


def test_a_healthy_request_records_its_status_and_budget(gateway: str, spans: Spans) -> None:
    assert httpx.get(f"{gateway}/whoami").status_code == 200
    root = spans.one("GET /whoami")
    assert root.attributes["http.response.status_code"] == 200
    assert root.attributes["task.type"] == "answer" and root.status.is_unset
