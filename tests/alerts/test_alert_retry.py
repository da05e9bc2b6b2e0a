"""Retries of the delivery stage: jittered backoff, and a receiver's Retry-After is honoured
(delay-seconds and HTTP-date), against a real local receiver with a compressed clock."""

from __future__ import annotations

import asyncio
import threading
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from alertkit import FakeQuery

from agentsla.alerts.config import parse_routing
from agentsla.alerts.notify.pipeline import Deliverer, notify_pipeline
from agentsla.alerts.notify.receivers import build_integrations
from agentsla.alerts.notify.retry import Retrier, parse_retry_after
from agentsla.alerts.routing.dispatch import Dispatcher
from agentsla.alerts.routing.nflog import NotificationLog
from agentsla.alerts.rules.evaluator import Evaluator
from agentsla.alerts.rules.expr import parse
from agentsla.alerts.rules.groups import Rule, RuleGroup
from agentsla.alerts.state import Store

RULE = Rule("ToolErrors", parse("hop_error_rate by (hop_name) [2m] > 0.02"), labels={"severity": "P1"})
T = 1_700_000_000.0


class ScriptedReceiver:
    """A loopback HTTP receiver answering each POST with the next scripted (status, headers)."""

    def __init__(self, script: list[tuple[int, dict[str, str]]]) -> None:
        self.script, self.hits = list(script), 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                self.rfile.read(int(self.headers.get("content-length") or 0))
                status, headers = outer.script.pop(0) if outer.script else (200, {})
                outer.hits += 1
                self.send_response(status)
                for name, value in {**headers, "content-length": "0"}.items():
                    self.send_header(name, value)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()


class NoMute:
    def mutes(self, labels, now):
        return False


def _hits_at(tmp_path, script, times: list[float]) -> list[int]:
    """Queue one notification at T, deliver at each of `times`; the receiver's hits after each."""
    receiver = ScriptedReceiver(script)
    q = FakeQuery()
    q.set("hop_error_rate", ({"hop_name": "search"}, 0.5, 100))

    async def scenario() -> list[int]:
        async with httpx.AsyncClient() as client:
            store = Store(tmp_path / "alerts.sqlite")
            nflog = NotificationLog(store)
            routing = parse_routing({
                "route": {"receiver": "hook", "group_wait": "0s"},
                "receivers": [{"name": "hook", "webhook_configs": [{"url": receiver.url}]}]}, "t")
            integrations = build_integrations(routing.receivers, client)
            dispatcher = Dispatcher(routing.route, integrations, notify_pipeline(NoMute(), nflog))
            deliverer = Deliverer(nflog, {i.key: i for i in integrations["hook"]},
                                  Retrier(initial_s=1, max_s=600, jitter=0))
            dispatcher.ingest(Evaluator([RuleGroup("g", (RULE,))]).eval(T, q), T)
            dispatcher.tick(T)
            hits = []
            for t in times:
                await deliverer.deliver(t)
                hits.append(receiver.hits)
            store.close()
            return hits

    try:
        return asyncio.run(scenario())
    finally:
        receiver.close()


def test_retry_after_seconds_is_honoured(tmp_path):
    # 429 asking for 120 s: not retried at +5 s (the 1 s backoff) nor +119 s, retried at +121 s
    hits = _hits_at(tmp_path, [(429, {"Retry-After": "120"})], [T, T + 5, T + 119, T + 121])
    assert hits == [1, 1, 1, 2]


def test_retry_after_http_date_is_honoured(tmp_path):
    # 503 until an HTTP date 60 s after the first attempt (written for the compressed clock)
    script = [(503, {"Retry-After": formatdate(T + 60, usegmt=True)})]
    hits = _hits_at(tmp_path, script, [T, T + 30, T + 61])
    assert hits == [1, 1, 2]


def test_without_retry_after_the_backoff_applies(tmp_path):
    # 503, no header: backoff 1 s, so the retry goes out at +5 s
    assert _hits_at(tmp_path, [(503, {})], [T, T + 5]) == [1, 2]


def test_retry_after_is_capped_by_max_backoff():
    retrier = Retrier(initial_s=1, max_s=300, jitter=0)
    ok, error = Retrier.check(429, "", "hook", "86400")
    assert ok and retrier.delay(1, error, T) == 300     # a day asked, the 5 min cap applies
    assert retrier.delay(1, "no header", T) == 1


@pytest.mark.parametrize("header, expected", [
    ("120", 120.0),                                      # delay-seconds
    (formatdate(T + 30, usegmt=True), 30.0),             # HTTP-date, 30 s after "now"
    (formatdate(T - 30, usegmt=True), 0.0),              # a date already past: no wait
    ("soon", None),                                      # unreadable: the backoff decides
    ("", None),
])
def test_parse_retry_after(header, expected):
    assert parse_retry_after(header, now=T) == expected


def test_backoff_is_jittered_within_half_to_full_delay():
    retrier = Retrier(initial_s=1, max_s=300, jitter=0.5)
    delays = [retrier.backoff(3) for _ in range(200)]    # the schedule says 4 s
    assert all(2.0 <= d <= 4.0 for d in delays)
    assert len({round(d, 6) for d in delays}) > 100      # spread, not one value
