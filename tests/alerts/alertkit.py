"""Test helpers for alerts: a recording HTTP receiver, a fake query source, free ports."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agentsla.alerts.rules.expr import Selector
from agentsla.alerts.rules.samples import Sample


@dataclass
class Delivery:
    """One request the receiver got."""

    path: str
    headers: dict[str, str]
    body: bytes
    status: int

    @property
    def json(self):
        """The body as JSON."""
        return json.loads(self.body)


class HookServer:
    """A tiny real HTTP server in a thread that records POSTs and can fail on purpose.

    `fail_next` answers that many requests with `fail_status`; `down` answers every request
    with 503 until cleared. Every request is recorded, failed or not.
    """

    def __init__(self) -> None:
        self.deliveries: list[Delivery] = []
        self.fail_next = 0
        self.fail_status = 503
        self.down = False
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                with outer.lock:
                    status = 200
                    if outer.down:
                        status = 503
                    elif outer.fail_next > 0:
                        outer.fail_next -= 1
                        status = outer.fail_status
                    outer.deliveries.append(Delivery(self.path, {k.lower(): v for k, v in self.headers.items()},
                                                     body, status))
                self.send_response(status)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> "HookServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def ok(self) -> list[Delivery]:
        """The deliveries answered 200."""
        return [d for d in self.deliveries if d.status == 200]


@dataclass
class FakeQuery:
    """A query source answering selectors from a dict: metric → list of (labels, value, count)."""

    series: dict[str, list[tuple[dict, float, int | None]]] = field(default_factory=dict)
    objectives: dict[str | None, float] = field(default_factory=dict)
    fail: Exception | None = None

    def set(self, metric: str, *rows: tuple) -> None:
        """Replace a metric's series: rows of (labels, value[, count])."""
        self.series[metric] = [(r[0], r[1], r[2] if len(r) > 2 else None) for r in rows]

    def select(self, selector: Selector, at_ns: int) -> list[Sample]:
        """Return the metric's series that match the selector's matchers."""
        if self.fail:
            raise self.fail
        out = []
        for labels, value, count in self.series.get(selector.metric, []):
            if all(m.matches(labels) for m in selector.matchers if m.label in labels):
                keep = {k: labels[k] for k in selector.by if k in labels}
                keep.update(selector.equal_labels())
                out.append(Sample(keep or dict(labels), value, count))
        return out

    def objective(self, task_type: str | None) -> float:
        """Return the configured objective (0.999 by default)."""
        return self.objectives.get(task_type, 0.999)

    def context(self, labels, window_s: float, at_ns: int) -> dict:
        """A fixed root cause."""
        return {"first_failing_hop": {"kind": "tool", "name": "search", "reason": "timeout",
                                      "span_id": None, "detail_span_id": None},
                "example_task_ids": ["t1", "t2"],
                "example_trace_ids": ["a" * 32, "b" * 32]}
