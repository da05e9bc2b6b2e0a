"""The span processor and hop spans: the span contract agentsla reads, stamped at start."""

from __future__ import annotations

import time

import pytest
from budgetkit import Spans

import agentsla_budget as budget


def test_every_span_gets_task_id_and_remaining_budget_and_the_root_the_rest(spans: Spans) -> None:
    with budget.task(total_ms=60000, task_id="p-1", task_type="chat", tenant="acme"):
        with spans.tracer.start_as_current_span("gateway"):
            time.sleep(0.05)
            with spans.tracer.start_as_current_span("agent"):
                pass
    root, child = spans.named("gateway")[0], spans.named("agent")[0]
    assert root.attributes["budget.total_ms"] == 60000
    assert (root.attributes["task.type"], root.attributes["tenant.id"]) == ("chat", "acme")
    assert root.attributes["task.id"] == child.attributes["task.id"] == "p-1"
    assert 55000 < root.attributes["budget.remaining_ms"] <= 60000
    assert child.attributes["budget.remaining_ms"] <= root.attributes["budget.remaining_ms"] - 50
    for key in ("budget.total_ms", "task.type", "tenant.id"):
        assert key not in child.attributes  # root-only attributes


def test_spans_outside_a_budget_are_left_alone(spans: Spans) -> None:
    with spans.tracer.start_as_current_span("plain"):
        pass
    assert dict(spans.named("plain")[0].attributes) == {}


def test_hop_stamps_the_timeout_the_budget_gave_it(spans: Spans) -> None:
    with budget.task(total_ms=1000, task_id="p-2"):
        with budget.hop("chat tail-model", "model", configured_s=45, attempts=3,
                        attributes={"gen_ai.request.model": "tail-model"},
                        tracer=spans.tracer) as call:
            assert 0.2 < call.timeout_s <= 1 / 3
    span = spans.named("chat tail-model")[0]
    assert span.attributes["hop.kind"] == "model"
    assert span.attributes["hop.timeout_ms"] == round(call.timeout_s * 1000, 1)
    assert span.attributes["hop.timeout_ms"] <= span.attributes["budget.remaining_ms"] / 3 + 0.1
    assert span.attributes["gen_ai.request.model"] == "tail-model"


def test_a_hop_with_nothing_left_is_recorded_as_exhausted_and_not_run(spans: Spans) -> None:
    with budget.task(total_ms=10, task_id="p-3"):
        time.sleep(0.03)
        with pytest.raises(budget.BudgetExhausted):
            with budget.hop("search", "tool", configured_s=5, tracer=spans.tracer):
                pytest.fail("the call must not run")  # pragma: no cover
    span = spans.named("search")[0]
    assert span.attributes["budget.exhausted"] is True
    assert span.attributes["error.type"] == "budget_exhausted"
    assert span.attributes["budget.remaining_ms"] <= 0
    assert not span.status.is_ok


def test_a_failing_call_marks_its_hop_span_failed_with_the_exception(spans: Spans) -> None:
    with budget.task(total_ms=1000), pytest.raises(TimeoutError):
        with budget.hop("search", "tool", configured_s=5, tracer=spans.tracer):
            raise TimeoutError("read timed out")
    span = spans.named("search")[0]
    assert not span.status.is_ok
    assert span.events[0].attributes["exception.type"] == "TimeoutError"
