"""Retries that respect the budget, against a real local HTTP server."""

from __future__ import annotations

import httpx
import pytest
from budgetkit import SlowServer, Spans

import agentsla_budget as budget


def _server_error(error: BaseException) -> bool:
    return isinstance(error, httpx.HTTPStatusError) and error.response.status_code >= 500


def _policy(**overrides) -> budget.RetryPolicy:
    settings = {"attempts": 3, "backoff_s": 0.05, "max_backoff_s": 0.08,
                "retry_on": lambda e: _server_error(e) or budget.transient(e)}
    return budget.RetryPolicy(**{**settings, **overrides})


def _get(url: str):
    def attempt(timeout_s: float) -> httpx.Response:
        response = httpx.get(url, timeout=timeout_s)
        response.raise_for_status()
        return response
    return attempt


def _call(url: str, spans: Spans, **kwargs) -> httpx.Response:
    options = {"name": "svc", "kind": "tool", "configured_s": 1.0, "policy": _policy(),
               "tracer": spans.tracer, **kwargs}
    return budget.call_with_retries(_get(url), **options)


def _attempts(spans: Spans) -> list[tuple[int, int]]:
    return [(s.attributes["retry.attempt"], s.attributes["retry.max"]) for s in spans.named("svc")]


def test_server_errors_are_retried_each_attempt_on_its_own_span(
        remote: SlowServer, spans: Spans) -> None:
    with budget.task(total_ms=10000), pytest.raises(httpx.HTTPStatusError):
        _call(f"{remote.url}/x?status=503", spans)
    assert len(remote.seen) == 3
    assert _attempts(spans) == [(0, 2), (1, 2), (2, 2)]
    assert all(s.attributes["hop.timeout_ms"] == 1000 for s in spans.named("svc"))
    assert all(not s.status.is_ok and s.events[0].name == "exception" for s in spans.named("svc"))


def test_retries_stop_when_the_next_attempt_cannot_fit(remote: SlowServer, spans: Spans) -> None:
    # 1.5 s budget, 1 s attempts: the first times out on the slow server, 0.5 s is left.
    with budget.task(total_ms=1500), pytest.raises(budget.BudgetExhausted) as raised:
        _call(f"{remote.url}/slow", spans)
    assert isinstance(raised.value.__cause__, httpx.ReadTimeout)
    assert len(remote.seen) == 1
    assert _attempts(spans) == [(0, 0)]  # the budget allowed no retry, and the span says so
    assert spans.named("svc")[0].events[0].attributes["exception.type"].endswith("ReadTimeout")


def test_a_first_attempt_short_of_a_full_one_gets_what_is_left(
        remote: SlowServer, spans: Spans) -> None:
    with budget.task(total_ms=600), pytest.raises(budget.BudgetExhausted):
        _call(f"{remote.url}/slow", spans)
    (span,) = spans.named("svc")
    assert span.attributes["hop.timeout_ms"] <= span.attributes["budget.remaining_ms"] <= 600
    assert span.attributes["retry.max"] == 0


def test_a_non_idempotent_call_without_a_key_is_tried_once(
        remote: SlowServer, spans: Spans) -> None:
    with budget.task(total_ms=10000), pytest.raises(httpx.HTTPStatusError):
        _call(f"{remote.url}/pay?status=503", spans, idempotent=False)
    assert len(remote.seen) == 1 and _attempts(spans) == [(0, 0)]


def test_a_non_idempotent_call_with_a_key_is_retried_and_carries_it(
        remote: SlowServer, spans: Spans) -> None:
    with budget.task(total_ms=10000), pytest.raises(httpx.HTTPStatusError):
        _call(f"{remote.url}/pay?status=503", spans, idempotent=False, idempotency_key="pay-42")
    assert len(remote.seen) == 3
    assert {s.attributes["idempotency.key"] for s in spans.named("svc")} == {"pay-42"}


def test_an_error_the_policy_does_not_retry_is_raised_at_once(
        remote: SlowServer, spans: Spans) -> None:
    with budget.task(total_ms=10000), pytest.raises(httpx.HTTPStatusError):
        _call(f"{remote.url}/x?status=404", spans)
    assert len(remote.seen) == 1


def test_a_success_after_a_retry_is_returned(remote: SlowServer, spans: Spans) -> None:
    urls = iter([f"{remote.url}/x?status=503", f"{remote.url}/x"])
    with budget.task(total_ms=10000):
        response = budget.call_with_retries(lambda t: _get(next(urls))(t), name="svc",
                                            kind="tool", configured_s=1.0, policy=_policy(),
                                            tracer=spans.tracer)
    assert response.json() == {"ok": True} and _attempts(spans) == [(0, 2), (1, 2)]
    failed, recovered = spans.named("svc")
    assert not failed.status.is_ok and recovered.status.is_unset


def test_backoff_grows_with_jitter_and_its_cap(remote: SlowServer, spans: Spans) -> None:
    waits: list[float] = []
    with budget.task(total_ms=10000), pytest.raises(httpx.HTTPStatusError):
        _call(f"{remote.url}/x?status=503", spans, sleep=waits.append)
    # 0.05 s then 0.1 s capped at 0.08 s, each shortened by up to 25 %.
    assert 0.0375 <= waits[0] <= 0.05 and 0.06 <= waits[1] <= 0.08 and len(waits) == 2


@pytest.mark.parametrize("error, retried", [
    (httpx.ReadTimeout("slow"), True),
    (httpx.ConnectError("refused"), True),
    (TimeoutError(), True),
    (ConnectionResetError(), True),
    (ValueError("bad input"), False),
    (budget.BudgetExhausted("spent"), False),  # never retry for lack of time
])
def test_transient_names_the_errors_worth_another_attempt(error: BaseException,
                                                          retried: bool) -> None:
    assert budget.transient(error) is retried


def test_a_policy_that_cannot_run_is_refused() -> None:
    with pytest.raises(ValueError):
        budget.RetryPolicy(attempts=0)
