"""openai: timeout and max_retries from the budget, with the real client against a local server."""

from __future__ import annotations

import time

import openai
import pytest
from budgetkit import SlowServer

import agentsla_budget as budget
from agentsla_budget.ext.openai import budgeted

MESSAGES = [{"role": "user", "content": "hi"}]


def _client(url: str, path: str = "", **kwargs) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}{path}/v1", api_key="test", **kwargs)


def test_the_post_mortem_client_is_cut_to_one_short_attempt(remote: SlowServer) -> None:
    # 45 s x 3 attempts under a 1 s budget: one attempt, with what is left.
    client = _client(remote.url, timeout=45, max_retries=2)
    with budget.task(total_ms=1000):
        cut = budgeted(client)
    assert cut.max_retries == 0 and 0.5 < cut.timeout <= 1.0
    assert (client.timeout, client.max_retries) == (45, 2)  # the original is untouched


def test_retries_are_kept_while_they_fit_with_openais_backoff(remote: SlowServer) -> None:
    client = _client(remote.url, timeout=2, max_retries=2)
    with budget.task(total_ms=10000):  # 3 x 2 s + 0.5 s + 1 s of backoff = 7.5 s
        assert (budgeted(client).timeout, budgeted(client).max_retries) == (2, 2)
    with budget.task(total_ms=5000):   # 2 x 2 s + 0.5 s = 4.5 s
        assert (budgeted(client).timeout, budgeted(client).max_retries) == (2, 1)


def test_a_slow_model_call_stops_at_the_budget_after_one_attempt(remote: SlowServer) -> None:
    client = _client(remote.url, "/slow", timeout=45, max_retries=2)
    with budget.task(total_ms=1200, task_id="o-1", task_type="chat"):
        started = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            budgeted(client).chat.completions.create(model="tail-model", messages=MESSAGES)
    assert time.monotonic() - started < 5
    assert len(remote.seen) == 1  # no retry: none could fit
    sent = remote.seen[0].budget()
    assert sent.task_id == "o-1" and 0 < sent.remaining_ms <= 1200


def test_a_fast_call_succeeds_and_carries_the_budget(remote: SlowServer) -> None:
    client = _client(remote.url, timeout=10, max_retries=2)
    with budget.task(total_ms=30000, task_id="o-2"):
        answer = budgeted(client).chat.completions.create(model="tail-model", messages=MESSAGES)
    assert answer.choices[0].message.content == "ok"
    assert remote.seen[0].budget().task_id == "o-2"


def test_no_budget_left_raises_before_calling(remote: SlowServer) -> None:
    client = _client(remote.url, timeout=10)
    with budget.task(total_ms=10):
        time.sleep(0.03)
        with pytest.raises(budget.BudgetExhausted):
            budgeted(client)
    assert budgeted(client) is client  # without a budget: unchanged
    assert remote.seen == []
