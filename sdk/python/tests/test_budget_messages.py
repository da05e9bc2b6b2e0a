"""Budgets through a queue: message headers, time spent waiting, and the consumer guard."""

from __future__ import annotations

import time

import pytest
from budgetkit import Spans

import agentsla_budget as budget
from agentsla_budget.wire import decode


def test_message_headers_carry_trace_budget_and_send_time(spans: Spans) -> None:
    with budget.task(total_ms=3000, task_id="q-1", task_type="chat"):
        with spans.tracer.start_as_current_span("enqueue"):
            headers = budget.inject_message({"x-app": "kept"})
    sent = decode(headers[budget.HEADER])
    assert headers["x-app"] == "kept" and "traceparent" in headers
    assert 2000 < sent.remaining_ms <= 3000 and sent.task_id == "q-1"
    assert abs(sent.sent_ms - time.time() * 1000) < 5000


def test_the_wait_in_the_queue_is_taken_off_the_budget() -> None:
    headers = {budget.HEADER: "remaining-ms=5000;task-id=q-2"}
    ctx = budget.extract_message(headers, enqueued_at=time.time() - 2)
    assert 2000 < budget.current(ctx).remaining_ms() <= 3000


def test_the_producers_send_time_is_used_without_a_broker_time() -> None:
    sent_ms = time.time_ns() // 1_000_000 - 1000
    ctx = budget.extract_message({budget.HEADER: f"remaining-ms=5000;sent-ms={sent_ms}"})
    assert 3000 < budget.current(ctx).remaining_ms() <= 4000


def test_admit_drops_a_message_whose_budget_ran_out_while_it_waited() -> None:
    headers = {budget.HEADER: "remaining-ms=3000;task-id=q-3"}
    assert budget.admit(headers, enqueued_at=time.time() - 4) is None
    assert budget.admit(headers, enqueued_at=time.time() - 1) is not None
    # Too little left to be worth starting is the same as nothing left.
    assert budget.admit(headers, enqueued_at=time.time() - 2.5, min_remaining_ms=1000) is None


def test_a_message_without_a_budget_is_admitted() -> None:
    assert budget.current(budget.admit({})) is None


def test_consume_fails_fast_on_an_expired_message_and_runs_a_live_one(spans: Spans) -> None:
    with pytest.raises(budget.MessageExpired):
        with budget.consume({budget.HEADER: "remaining-ms=0;task-id=q-4"}):
            pytest.fail("the handler must not run")  # pragma: no cover
    with budget.task(total_ms=2000, task_id="q-5"):
        with spans.tracer.start_as_current_span("enqueue") as producer:
            headers = budget.inject_message()
    with budget.consume(headers) as received:
        assert received.task_id == "q-5" and budget.remaining_ms() <= 2000
        with spans.tracer.start_as_current_span("handle"):
            pass
    handle = spans.named("handle")[0]
    assert handle.parent.span_id == producer.get_span_context().span_id
    assert handle.attributes["task.id"] == "q-5"
    assert budget.current() is None
