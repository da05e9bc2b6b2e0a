"""The writer stores each span's logical call and attempt, and corrects them when a late span
changes them (a sibling arriving in a later batch, or after a restart). `con` is the suite's
in-memory store; a second TaskWriter on it starts with empty memory, as after a restart."""

from __future__ import annotations

import pytest

from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config
from spanfactory import make_span

TRACE = "c" * 32
RATE_LIMITED = {"error_type": "rate_limited", "http_status": 429, "status_code": "error"}


def writer(con) -> TaskWriter:
    return TaskWriter(con, load_config(environ={}).tasks)


def stored_calls(con) -> dict[str, tuple[str, int]]:
    return {span_id: (call_id, attempt) for span_id, call_id, attempt in con.execute(
        "select span_id, call_id, attempt from spans").fetchall()}


def root_and_agent() -> list[dict]:
    root = make_span(trace_id=TRACE, span_id="gw", hop_kind="gateway", span_kind="server",
                     start_ms=0, end_ms=5000, http_status=200)
    return [root, make_span(trace_id=TRACE, span_id="ag", parent=root, hop_kind="agent",
                            start_ms=5, end_ms=4990)]


def model(span_id: str, start_ms: float, end_ms: float, **kw) -> dict:
    return make_span(trace_id=TRACE, span_id=span_id, parent_span_id="ag", hop_kind="model",
                     model="gpt-4o", start_ms=start_ms, end_ms=end_ms, **kw)


def test_spans_are_inserted_numbered(con) -> None:
    # 429, 429, 200 without retry numbers: one call of three attempts; the rest their own calls.
    writer(con).write([*root_and_agent(), model("m0", 100, 200, **RATE_LIMITED),
                       model("m1", 300, 400, **RATE_LIMITED), model("m2", 500, 900)])
    assert stored_calls(con) == {"gw": ("gw", 0), "ag": ("ag", 0), "m0": ("m0", 0),
                                 "m1": ("m0", 1), "m2": ("m0", 2)}


@pytest.mark.parametrize("restart", [False, True])
def test_late_sibling_renumbers_stored_spans(con, restart: bool) -> None:
    # The first batch holds the second and third attempts; the first attempt (an earlier 429)
    # arrives in a later batch, from memory or, after a restart, from the database.
    first = writer(con)
    first.write([*root_and_agent(), model("m1", 300, 400, **RATE_LIMITED),
                 model("m2", 500, 900)])
    assert stored_calls(con)["m2"] == ("m1", 1)
    late = writer(con) if restart else first
    late.write([model("m0", 100, 200, **RATE_LIMITED)])
    assert stored_calls(con) == {"gw": ("gw", 0), "ag": ("ag", 0), "m0": ("m0", 0),
                                 "m1": ("m0", 1), "m2": ("m0", 2)}
    # Memory agrees with the database: one more late span keeps every number.
    late.write([make_span(trace_id=TRACE, span_id="t0", parent_span_id="ag", hop_kind="tool",
                          tool="search", start_ms=1000, end_ms=1100)])
    assert stored_calls(con)["m2"] == ("m0", 2) and stored_calls(con)["t0"] == ("t0", 0)


def test_late_new_call_leaves_stored_numbers(con) -> None:
    # A later call after a success is a new call: nothing stored changes.
    w = writer(con)
    w.write([*root_and_agent(), model("m0", 100, 900)])
    w.write([model("m1", 1000, 1900)])
    assert stored_calls(con) == {"gw": ("gw", 0), "ag": ("ag", 0), "m0": ("m0", 0),
                                 "m1": ("m1", 0)}
