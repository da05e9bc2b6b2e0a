"""Trace shapes for the finding tests: a tiny builder over tests/spanfactory.make_span.

    t = Trace(at_ms=0)                      # a gateway root, 60 s timeout, task id = trace id
    agent = t.child(t.root, "agent", "planner", 10, 900)
    t.child(agent, "model", "gpt", 20, 400, hop_timeout_ms=15000)
    rows = t.finish(900)                    # sets the root's end; returns the rows

Times are milliseconds after spanfactory.BASE_NS plus the trace's `at_ms`.
"""

from __future__ import annotations

import itertools
from typing import Any

from spanfactory import make_span

_traces = itertools.count(1)
_spans = itertools.count(1)


class Trace:
    """One task: a gateway root span and its descendants."""

    def __init__(self, at_ms: float = 0.0, root_end_ms: float = 1000.0, **root: Any) -> None:
        self.at = at_ms
        self.trace_id = f"{next(_traces):032x}"
        self.rows: list[dict] = []
        defaults = {"hop_timeout_ms": 60_000.0, "budget_total_ms": 60_000.0,
                    "http_status": 200, "task_type": "chat"}
        self.root = self._span(None, "gateway", "gateway", 0.0, root_end_ms,
                               **{**defaults, **root})

    def _span(self, parent: dict | None, kind: str, name: str, start: float, end: float,
              **kw: Any) -> dict:
        names = {"model": "model", "tool": "tool", "agent": "agent"}
        if kind in names and names[kind] not in kw:
            kw[names[kind]] = name
        row = make_span(trace_id=self.trace_id, span_id=f"{next(_spans):016x}",
                        parent_span_id=parent["span_id"] if parent else None,
                        hop_kind=kind, hop_name=name, name=name,
                        start_ms=self.at + start, end_ms=self.at + end, **kw)
        self.rows.append(row)
        return row

    def child(self, parent: dict, kind: str, name: str, start: float, end: float,
              **kw: Any) -> dict:
        """Add a span under `parent` running from `start` to `end` ms (relative to the trace)."""
        return self._span(parent, kind, name, start, end, **kw)

    @property
    def task_id(self) -> str:
        """The task id (the trace id: these traces declare no task.id)."""
        return self.trace_id


def healthy_task(at_ms: float, i: int) -> list[dict]:
    """A clean task: sane timeouts, fast tools, a connection error recovered by one retry."""
    t = Trace(at_ms, root_end_ms=3000)
    queue = t.child(t.root, "queue", "jobs", 5, 55, hop_timeout_ms=10_000)
    agent = t.child(t.root, "agent", "planner", 60, 2990, hop_timeout_ms=50_000, loop_limit=5)
    clock = 70.0
    for step in range(3):
        model = dict(hop_timeout_ms=15_000, retry_max=1, ttft_ms=300.0,
                     input_tokens=1000 + 500 * step, output_tokens=200)
        if i % 5 == 0 and step == 0:  # one call in fifteen: a refused connection, retried once
            t.child(agent, "model", "gpt-4o", clock, clock + 50, retry_attempt=0,
                    error_type="connection_error", status_code="error", **model)
            clock += 60
            t.child(agent, "model", "gpt-4o", clock, clock + 500, retry_attempt=1, **model)
        else:
            t.child(agent, "model", "gpt-4o", clock, clock + 500, retry_attempt=0, **model)
        clock += 510
        if step < 2:
            t.child(agent, "tool", "search", clock, clock + 200, hop_timeout_ms=5_000,
                    idempotency_key=f"{t.trace_id}-{step}")
            clock += 210
    assert queue and clock < 2990
    return t.rows


def shifted(rows: list[dict], offset_ns: int) -> list[dict]:
    """Return copies of span rows moved later by offset_ns."""
    keys = ("start_ns", "end_ns", "received_ns")
    return [{**r, **{k: r[k] + offset_ns for k in keys if r[k] is not None}} for r in rows]
