"""The task budget: deadline, remaining time, and the timeout a hop may use."""

from __future__ import annotations

import math
import time

import pytest

import agentsla_budget as budget


def test_task_sets_a_monotonic_deadline_and_restores_the_outer_budget() -> None:
    assert budget.current() is None and budget.remaining_ms() == math.inf
    before = time.monotonic()
    with budget.task(total_ms=60000, task_id="t-1", task_type="chat", tenant="acme") as outer:
        assert before + 60 <= budget.deadline() <= time.monotonic() + 60
        assert 55000 < budget.remaining_ms() <= 60000
        assert (outer.task_id, outer.task_type, outer.tenant) == ("t-1", "chat", "acme")
        with budget.task(total_ms=1000, task_id="t-2"):
            assert budget.current().task_id == "t-2" and budget.remaining_ms() <= 1000
        assert budget.current() is outer
    assert budget.current() is None


def test_expired_turns_true_once_the_budget_is_spent() -> None:
    with budget.task(total_ms=30):
        assert not budget.expired()
        time.sleep(0.05)
        assert budget.expired() and budget.remaining_ms() < 0


def test_task_works_as_a_decorator_with_a_fresh_budget_per_call() -> None:
    @budget.task(total_ms=5000, task_type="search")
    def handler() -> tuple[str, float]:
        return budget.current().task_id, budget.remaining_ms()

    (first, left), (second, _) = handler(), handler()
    assert first != second  # a new task id per call
    assert 3000 < left <= 5000
    assert budget.current() is None


@pytest.mark.parametrize("total_ms", [0, -5])
def test_a_budget_must_be_positive(total_ms: float) -> None:
    with pytest.raises(ValueError):
        budget.task(total_ms=total_ms)


def test_timeout_is_never_more_than_configured() -> None:
    with budget.task(total_ms=60000):
        assert budget.timeout_for(10) == 10  # 10 s of 60 s left: the configured value stands


def test_timeout_is_the_hops_share_of_what_is_left() -> None:
    # The post-mortem: 45 s read timeout x 3 attempts under 1 s left gives at most 1/3 s each.
    with budget.task(total_ms=1000):
        assert 0.2 < budget.timeout_for(45, attempts=3) <= 1 / 3


def test_timeout_keeps_the_reserve_for_the_caller() -> None:
    with budget.task(total_ms=1000):
        assert 0.4 < budget.timeout_for(45, reserve_ms=300) <= 0.7


def test_no_budget_left_raises_budget_exhausted() -> None:
    with budget.task(total_ms=10):
        time.sleep(0.03)
        with pytest.raises(budget.BudgetExhausted):
            budget.timeout_for(45)
    with budget.task(total_ms=1000), pytest.raises(budget.BudgetExhausted):
        budget.timeout_for(45, reserve_ms=1000)


def test_without_a_budget_the_configured_timeout_stands() -> None:
    assert budget.timeout_for(45, attempts=3) == 45
    with pytest.raises(LookupError):
        budget.deadline()


@pytest.mark.parametrize("total_ms, attempts, waits, fit", [
    (10000, 3, [0.5, 1.0], 3),  # 3 x 2 s + 1.5 s of waits = 7.5 s <= 10 s
    (7000, 3, [0.5, 1.0], 2),   # the third attempt and its 1 s wait no longer fit
    (2500, 3, [0.5, 1.0], 1),   # one full 2 s attempt; a retry would need 4.5 s
    (1500, 3, [0.5, 1.0], 0),   # not even one full attempt
])
def test_attempts_that_fit_counts_full_attempts_and_their_waits(
        total_ms: float, attempts: int, waits: list[float], fit: int) -> None:
    with budget.task(total_ms=total_ms):
        assert budget.attempts_that_fit(2.0, attempts, waits) == fit
