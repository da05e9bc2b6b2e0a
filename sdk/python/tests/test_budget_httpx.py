"""httpx: per-request timeouts cut to the budget and the budget handed on, against a real server."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from budgetkit import SlowServer

import agentsla_budget as budget
from agentsla_budget.ext.httpx import AsyncBudgetTransport, BudgetTransport


def test_a_slow_call_gives_up_when_the_budget_does_not_at_its_own_timeout(
        remote: SlowServer) -> None:
    with httpx.Client(transport=BudgetTransport(), timeout=30) as client:
        with budget.task(total_ms=800, task_id="h-1", task_type="chat"):
            started = time.monotonic()
            with pytest.raises(httpx.ReadTimeout):
                client.get(f"{remote.url}/slow")
    assert time.monotonic() - started < 4  # far under the 30 s configured, and the 5 s server
    sent = remote.seen[0].budget()
    assert sent.task_id == "h-1" and sent.task_type == "chat" and 0 < sent.remaining_ms <= 800


def test_the_configured_timeout_stands_when_the_budget_is_larger(remote: SlowServer) -> None:
    with httpx.Client(transport=BudgetTransport(), timeout=0.5) as client:
        with budget.task(total_ms=60000), pytest.raises(httpx.ReadTimeout):
            started = time.monotonic()
            client.get(f"{remote.url}/slow")
    assert time.monotonic() - started < 4
    assert remote.seen[0].budget().remaining_ms > 50000


def test_a_spent_budget_sends_nothing(remote: SlowServer) -> None:
    with httpx.Client(transport=BudgetTransport()) as client:
        with budget.task(total_ms=10):
            time.sleep(0.03)
            with pytest.raises(budget.BudgetExhausted):
                client.get(f"{remote.url}/x")
    assert remote.seen == []


def test_without_a_budget_requests_go_out_unchanged(remote: SlowServer) -> None:
    with httpx.Client(transport=BudgetTransport()) as client:
        assert client.get(f"{remote.url}/x").json() == {"ok": True}
    assert remote.seen[0].budget() is None


def test_the_async_transport_cuts_timeouts_too(remote: SlowServer) -> None:
    async def call() -> None:
        async with httpx.AsyncClient(transport=AsyncBudgetTransport(), timeout=30) as client:
            with budget.task(total_ms=700, task_id="h-2"):
                await client.get(f"{remote.url}/slow")

    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        asyncio.run(call())
    assert time.monotonic() - started < 4
    assert remote.seen[0].budget().task_id == "h-2"
