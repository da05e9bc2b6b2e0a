"""requests: the timeout of each request cut to the budget, against a real server."""

from __future__ import annotations

import time

import pytest
import requests
from budgetkit import SlowServer

import agentsla_budget as budget
from agentsla_budget.ext.requests import budget_session, clamp_timeout


def test_a_slow_call_gives_up_when_the_budget_does(remote: SlowServer) -> None:
    with budget_session() as session, budget.task(total_ms=800, task_id="r-1"):
        started = time.monotonic()
        with pytest.raises(requests.exceptions.ReadTimeout):
            session.get(f"{remote.url}/slow", timeout=30)
    assert time.monotonic() - started < 4
    sent = remote.seen[0].budget()
    assert sent.task_id == "r-1" and 0 < sent.remaining_ms <= 800


def test_a_call_without_a_timeout_gets_one_from_the_budget(remote: SlowServer) -> None:
    with budget_session() as session, budget.task(total_ms=600):
        with pytest.raises(requests.exceptions.ReadTimeout):
            session.get(f"{remote.url}/slow")  # requests alone would wait forever


def test_connect_and_read_timeouts_are_cut_separately() -> None:
    with budget.task(total_ms=1000):
        connect, read = clamp_timeout((0.2, 45))
    assert connect == 0.2 and 0.5 < read <= 1.0


def test_a_spent_budget_sends_nothing(remote: SlowServer) -> None:
    with budget_session() as session, budget.task(total_ms=10):
        time.sleep(0.03)
        with pytest.raises(budget.BudgetExhausted):
            session.get(f"{remote.url}/x")
    assert remote.seen == []


def test_without_a_budget_requests_go_out_unchanged(remote: SlowServer) -> None:
    with budget_session() as session:
        assert session.get(f"{remote.url}/x", timeout=5).json() == {"ok": True}
    assert remote.seen[0].budget() is None
