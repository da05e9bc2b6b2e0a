"""Crash safety: SIGKILL the server at random moments under continuous agent traffic.

Two kinds of client run at once. Raw senders post OTLP protobuf with httpx and record exactly
which requests were answered 200 (the acked set); a request that failed (connection refused or
reset by the kill) is re-sent until it is answered 200, so some spans arrive twice, once from
before and once after a crash. The real OpenTelemetry SDK (BatchSpanProcessor and the
proto-http OTLPSpanExporter with its own retry) exports further tasks meanwhile; a wrapper
records, per batch, whether the exporter reported it exported or gave up (its retry window ran
out while the server restarted: the SDK then drops the batch, which is the exporter's loss, not
the server's). A controller kills the server with SIGKILL several times and restarts it on the
same data dir and ports. After the last restart: every acked span, raw or from the SDK, is
stored exactly as sent, once; spans of batches the exporter gave up on are counted apart (they
may or may not be stored, never twice); every task's span_count and outcome agree with its
stored spans.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind

from agentload import PROTO, SentTask, agent_task, mismatches, record, stored_spans
from serverproc import ServerProcess

RAW_SENDERS = 2
SDK_CHILDREN = ("chat claude", "execute_tool fetch")


@dataclass
class Ledger:
    """What the clients sent and what the server acknowledged."""

    acked: dict[str, SentTask] = field(default_factory=dict)
    resent_after_error: set[str] = field(default_factory=set)
    unacked: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # answered 4xx: must never happen here
    sdk_traces: dict[str, int] = field(default_factory=dict)  # trace id -> sdk.seq
    sdk_acked: dict[str, set[str]] = field(default_factory=dict)  # trace id -> span names
    sdk_dropped: dict[str, set[str]] = field(default_factory=dict)  # the exporter gave up
    lock: threading.Lock = field(default_factory=threading.Lock)


class RecordingExporter(SpanExporter):
    """Delegates to the real exporter and records which spans it reported exported or dropped."""

    def __init__(self, inner: SpanExporter, ledger: Ledger) -> None:
        self.inner = inner
        self.ledger = ledger

    def export(self, spans: list[ReadableSpan]) -> SpanExportResult:
        """Export through the real exporter; note each span under its batch's result."""
        result = self.inner.export(spans)
        book = self.ledger.sdk_acked if result is SpanExportResult.SUCCESS else \
            self.ledger.sdk_dropped
        with self.ledger.lock:
            for span in spans:
                book.setdefault(format(span.context.trace_id, "032x"), set()).add(span.name)
        return result

    def shutdown(self) -> None:
        """Shut the real exporter down."""
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Flush the real exporter."""
        return self.inner.force_flush(timeout_millis)


def _raw_sender(server: ServerProcess, sender: int, stop: threading.Event, hard_stop: float,
                ledger: Ledger) -> None:
    """Send task after task; re-send each until it is answered 200 (bounded by hard_stop)."""
    with httpx.Client(timeout=10) as client:
        seq = 0
        while not stop.is_set() and time.monotonic() < hard_stop:
            task = agent_task(sender, seq)
            seq += 1
            failed_once, last = False, ""
            while time.monotonic() < hard_stop:
                try:
                    response = client.post(server.traces_url, content=task.body, headers=PROTO)
                    status, last = response.status_code, f"{response.status_code} {response.text}"
                except httpx.HTTPError as error:
                    status, last = None, repr(error)
                if status == 200:
                    with ledger.lock:
                        ledger.acked[task.trace_id] = task
                        if failed_once:
                            ledger.resent_after_error.add(task.trace_id)
                    break
                if status is not None and 400 <= status < 500 and status != 429:
                    ledger.refused.append(f"{task.trace_id}: {status}")
                    break
                failed_once = True
                time.sleep(0.05)
            else:
                ledger.unacked.append(f"{task.trace_id}: last answer {last[:300]}")


def _sdk_producer(tracer, stop: threading.Event, hard_stop: float, ledger: Ledger) -> None:
    """Emit small agent tasks through the SDK at a steady pace."""
    seq = 0
    while not stop.is_set() and time.monotonic() < hard_stop:
        with tracer.start_as_current_span("POST /sdk", kind=SpanKind.SERVER,
                                          attributes={"task.type": "sdk_task",
                                                      "sdk.seq": seq}) as root:
            with tracer.start_as_current_span(SDK_CHILDREN[0], kind=SpanKind.CLIENT, attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.request.model": "claude",
                    "sdk.seq": seq}):
                pass
            with tracer.start_as_current_span(SDK_CHILDREN[1], attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "fetch",
                    "sdk.seq": seq}):
                pass
        with ledger.lock:
            ledger.sdk_traces[format(root.get_span_context().trace_id, "032x")] = seq
        seq += 1
        time.sleep(0.05)


def _restart(old: ServerProcess) -> ServerProcess:
    """Start the server again on the same data dir and ports, keeping the logs so far."""
    new = old.restarted()
    new.log = old.log + "\n--- killed, started again ---\n"
    return new.start()


def run_crash_campaign(data_dir: Path, kills: int, seed: int,
                       server_args: list[str] | None = None) -> dict:
    """Run traffic, SIGKILL the server `kills` times at random moments, then verify storage."""
    rng = random.Random(seed)
    server = ServerProcess(data_dir, server_args or []).start()
    stop = threading.Event()
    hard_stop = time.monotonic() + 60 + kills * 15  # every loop ends by itself
    restarts: list[float] = []
    provider = TracerProvider(resource=Resource.create({"service.name": "sdk-agent"}))
    ledger = Ledger()
    # The exporter's own retry (connection errors, 503/429 with backoff) spans the restarts.
    exporter = RecordingExporter(OTLPSpanExporter(endpoint=server.traces_url, timeout=60), ledger)
    provider.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=50_000,
                                                   schedule_delay_millis=100,
                                                   max_export_batch_size=256))
    threads = [threading.Thread(target=_raw_sender, args=(server, i + 1, stop, hard_stop, ledger))
               for i in range(RAW_SENDERS)]
    threads.append(threading.Thread(target=_sdk_producer, args=(
        provider.get_tracer("hardening"), stop, hard_stop, ledger)))
    for thread in threads:
        thread.start()
    try:
        for _ in range(kills):
            time.sleep(rng.uniform(1.5, 4.0))  # a random moment: mid-request, mid-commit, idle
            server.kill()
            time.sleep(rng.uniform(0.0, 0.5))
            began = time.monotonic()
            server = _restart(server)
            restarts.append(time.monotonic() - began)
        time.sleep(2.0)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=max(1.0, hard_stop - time.monotonic()))
        flushed = provider.force_flush(timeout_millis=90_000)
        provider.shutdown()
    try:
        figures = _verify(server, ledger, flushed)
    except Exception as failure:
        server.stop()
        raise AssertionError(f"{failure}\nthe server's logs, every start:\n"
                             f"{server.log[-8000:]}") from failure
    assert server.stop() == 0
    figures["kills"] = kills
    figures["slowest_restart_s"] = round(max(restarts), 1)
    return figures


def _verify(server: ServerProcess, ledger: Ledger, flushed: bool) -> dict:
    assert not ledger.refused, ledger.refused[:5]
    assert not ledger.unacked, f"{len(ledger.unacked)} requests never answered 200"
    assert flushed, "the SDK could not flush its spans"
    problems: list[str] = []
    with httpx.Client(timeout=30) as client:
        for task in ledger.acked.values():
            problems += mismatches(task, stored_spans(client, server.api_url, task.trace_id))
            row = client.get(f"{server.api_url}/api/v1/tasks/{task.trace_id}").json()
            if (row.get("span_count"), row.get("outcome")) != (len(task.spans), task.outcome):
                problems.append(f"task {task.trace_id}: {row.get('span_count')} spans, "
                                f"{row.get('outcome')}; sent {len(task.spans)}, {task.outcome}")
        for trace_id, seq in ledger.sdk_traces.items():
            problems += _sdk_problems(client, server, ledger, trace_id, seq)
    assert not problems, f"{len(problems)} problems, first: {problems[:5]}"
    return {"acked_requests": len(ledger.acked),
            "acked_spans": sum(len(t.spans) for t in ledger.acked.values()),
            "resent_after_error": len(ledger.resent_after_error),
            "sdk_spans_acked": sum(map(len, ledger.sdk_acked.values())),
            "sdk_spans_dropped_by_exporter": sum(map(len, ledger.sdk_dropped.values())),
            "lost_spans": 0}


def _sdk_problems(client: httpx.Client, server: ServerProcess, ledger: Ledger, trace_id: str,
                  seq: int) -> list[str]:
    """Check one SDK trace: what the exporter got acked is stored, nothing twice, nothing odd."""
    spans = stored_spans(client, server.api_url, trace_id)
    names = [s["name"] for s in spans]
    acked = ledger.sdk_acked.get(trace_id, set())
    sent = acked | ledger.sdk_dropped.get(trace_id, set())
    if sent != {"POST /sdk", *SDK_CHILDREN}:
        return [f"sdk trace {trace_id}: the exporter neither acked nor dropped "
                f"{sorted({'POST /sdk', *SDK_CHILDREN} - sent)}"]
    if not acked <= set(names) or len(names) != len(set(names)) or not set(names) <= sent:
        return [f"sdk trace {trace_id}: stored {sorted(names)}, acked {sorted(acked)}"]
    if any(s["attributes"].get("sdk.seq") != seq for s in spans):
        return [f"sdk trace {trace_id}: attributes differ"]
    if not spans:
        return []
    row = client.get(f"{server.api_url}/api/v1/tasks/{trace_id}").json()
    outcome_ok = row.get("outcome") == "success" or "POST /sdk" not in names
    return [] if row.get("span_count") == len(spans) and outcome_ok else \
        [f"sdk task {trace_id}: {row}"]


def _report(name: str, figures: dict) -> None:
    record(name, " ".join(f"{k}={v}" for k, v in figures.items()))


def test_sigkill_loses_no_acknowledged_span(tmp_path: Path) -> None:
    figures = run_crash_campaign(tmp_path / "data", kills=3, seed=20240501)
    # the kills landed in real traffic: requests were cut off and re-sent across restarts
    assert figures["acked_requests"] > 20 and figures["resent_after_error"] >= 1
    _report("crash.txt", figures)


def test_sigkill_with_receiver_processes_loses_no_acknowledged_span(tmp_path: Path) -> None:
    # SIGKILL hits the writer process; its receiver processes answer 503 and exit by themselves
    figures = run_crash_campaign(tmp_path / "data", kills=2, seed=20261201,
                                 server_args=["--receivers", "2"])
    assert figures["acked_requests"] > 10 and figures["resent_after_error"] >= 1
    _report("crash-receivers.txt", figures)


@pytest.mark.soak
def test_sigkill_soak(tmp_path: Path) -> None:
    figures = run_crash_campaign(tmp_path / "data", kills=12, seed=7)
    assert figures["acked_requests"] > 100 and figures["resent_after_error"] >= 3
    _report("crash-soak.txt", figures)
