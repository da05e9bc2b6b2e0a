"""The `agentsla-budget` header and the OpenTelemetry propagator that carries it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import agentsla_budget as budget
from agentsla_budget.wire import WireBudget, decode, encode


def test_the_header_round_trips_with_percent_encoded_values() -> None:
    value = WireBudget(remaining_ms=2950, task_id="task 7;x=1", task_type="chat/answer")
    text = encode(value)
    assert text == "remaining-ms=2950;task-id=task%207%3Bx%3D1;task-type=chat%2Fanswer"
    assert decode(text) == value


def test_the_header_reads_spaces_case_and_unknown_keys_leniently() -> None:
    assert decode(" Remaining-MS = 40 ; future-key=1 ;task-id=a") == WireBudget(40, "a")


@pytest.mark.parametrize("header", [
    "",                      # nothing
    "task-id=a",             # no remaining-ms
    "remaining-ms=-5",       # a sign is not allowed: a spent budget is sent as 0
    "remaining-ms=1.5",      # whole milliseconds only
    "remaining-ms=abc",
    "remaining-ms=99999999999",  # more than 10^10 ms is no request budget
])
def test_invalid_headers_carry_no_budget(header: str) -> None:
    assert decode(header) is None


def test_the_propagator_carries_what_is_left_not_a_clock_time() -> None:
    carrier: dict[str, str] = {}
    with budget.task(total_ms=3000, task_id="t-9", task_type="chat"):
        budget.BudgetPropagator().inject(carrier)
    sent = decode(carrier[budget.HEADER])
    assert sent is not None and 2000 < sent.remaining_ms <= 3000
    assert (sent.task_id, sent.task_type, sent.sent_ms) == ("t-9", "chat", None)


def test_extract_sets_a_deadline_from_now_on_the_local_clock() -> None:
    ctx = budget.BudgetPropagator().extract({budget.HEADER: "remaining-ms=1500;task-id=t-3"})
    received = budget.current(ctx)
    assert received.task_id == "t-3"
    assert 1000 < received.remaining_ms() <= 1500


def test_inject_without_a_budget_writes_nothing() -> None:
    carrier: dict[str, str] = {}
    budget.BudgetPropagator().inject(carrier)
    assert carrier == {} and budget.BudgetPropagator().fields == {budget.HEADER}


def test_otel_propagators_env_loads_it_through_the_entry_point() -> None:
    script = ("import json, agentsla_budget as b\n"
              "from opentelemetry import propagate, trace\n"
              "from opentelemetry.sdk.trace import TracerProvider\n"
              "carrier = {}\n"
              "with b.task(total_ms=5000, task_id='e-1'):\n"
              "    with TracerProvider().get_tracer('t').start_as_current_span('s'):\n"
              "        propagate.inject(carrier)\n"
              "print(json.dumps(carrier))\n")
    env = {**os.environ, "OTEL_PROPAGATORS": "tracecontext,baggage,agentsla_budget"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True).stdout
    carrier = json.loads(out)
    assert "traceparent" in carrier
    assert decode(carrier[budget.HEADER]).task_id == "e-1"
