"""Overload: offered load far above what the server sustains, slow clients, too many sockets.

The burst test starts the server with a small ingest queue and task cache, then runs eight
senders for a bounded time as fast as they can. Half of them drop a request refused with
429/503 (as a sampler would); the other half wait Retry-After and re-send until answered 200 (as
the OTel exporters do). While it runs, a sampler reads the server's VmRSS, and the health route
must keep answering. Afterwards: the server is up; its peak RSS (VmHWM) stayed under a bound
computed from the config; every refusal carried Retry-After; every request answered 200 (first
time or after retries) is stored exactly, and a refused one left nothing behind.

The slow-client tests check the protections in agentsla/connguard.py and collector/http.py:
silent sockets, trickled headers and trickled bodies are cut off after --read-timeout, and the
sockets beyond --max-connections are answered 503 with Retry-After.
"""

from __future__ import annotations

import itertools
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agentload import (PROTO, SentTask, agent_task, mismatches, process_memory_kb, record,
                       stored_in_file)
from serverproc import ServerProcess

MiB = 1024**2
QUEUE_MAX = 1 * MiB
MAX_BODY = 2 * MiB
MAX_CONNECTIONS = 32
TASK_CACHE_SPANS = 20_000
TASKS_PER_REQUEST = 40  # 200 spans, about 150 KB of protobuf with the padding below
PAD = 400
OVERLOAD_ARGS = ["--queue-max-bytes", str(QUEUE_MAX), "--max-body-bytes", str(MAX_BODY),
                 "--max-connections", str(MAX_CONNECTIONS),
                 "--task-cache-spans", str(TASK_CACHE_SPANS), "--retry-after", "1s"]


def _batch(sender: int, first_seq: int) -> tuple[bytes, list[SentTask]]:
    """One request of TASKS_PER_REQUEST agent tasks (each padded to look like real prompts)."""
    tasks = [agent_task(sender, first_seq + i, tag=0xB0, pad=PAD) for i in range(TASKS_PER_REQUEST)]
    request = ExportTraceServiceRequest()
    for task in tasks:
        request.MergeFromString(task.body)  # repeated fields concatenate
    return request.SerializeToString(), tasks


class Burst:
    """Bookkeeping of one burst: what was acknowledged, refused, and how the server coped."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.acked: list[SentTask] = []
        self.refused: list[SentTask] = []
        self.statuses: dict[int | str, int] = {}
        self.missing_retry_after = 0
        self.rss_samples: list[int] = []
        self.health_failures: list[str] = []

    def count(self, status: int | str) -> None:
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1


def _sender(server: ServerProcess, sender: int, retries: bool, until: float, hard_stop: float,
            burst: Burst) -> None:
    seqs = itertools.count(0, TASKS_PER_REQUEST)
    with httpx.Client(timeout=30) as client:
        while time.monotonic() < until:
            body, tasks = _batch(sender, next(seqs))
            while time.monotonic() < hard_stop:
                try:
                    response = client.post(server.traces_url, content=body, headers=PROTO)
                except httpx.HTTPError as exc:  # a closed connection under pressure: re-send
                    burst.count(type(exc).__name__)
                    continue
                burst.count(response.status_code)
                if response.status_code == 200:
                    with burst.lock:
                        burst.acked.extend(tasks)
                    break
                assert response.status_code in (429, 503), response.text
                if not response.headers.get("retry-after"):
                    burst.missing_retry_after += 1
                if not retries:
                    with burst.lock:
                        burst.refused.extend(tasks)
                    break
                # Honour Retry-After, capped so the retrying senders keep the pressure on.
                time.sleep(min(float(response.headers.get("retry-after") or 1), 0.5))


def _watch(server: ServerProcess, stop: threading.Event, burst: Burst) -> None:
    with httpx.Client(timeout=10) as client:
        while not stop.wait(0.25):
            burst.rss_samples.append(_memory_kb(server, "VmRSS"))
            try:
                health = client.get(f"{server.api_url}/api/v1/health")
                if health.status_code != 200:
                    burst.health_failures.append(str(health.status_code))
            except httpx.HTTPError as exc:
                burst.health_failures.append(repr(exc))


def memory_bound_kb(baseline_kb: int) -> int:
    """Peak RSS allowed: the idle server plus what the config lets ingest hold at once.

    - the queue: QUEUE_MAX estimated bytes; a Python row dict really takes ~3x the estimate;
    - the task cache: TASK_CACHE_SPANS rows of ~4 KiB each (padded attributes included);
    - requests in flight: at most MAX_CONNECTIONS bodies of MAX_BODY, each also decoded to a
      protobuf (~2x) and normalized to rows (~6x) while it waits for the queue;
    - DuckDB's working set for one group commit and the Arrow copy of it: 128 MiB.
    """
    queue = 3 * QUEUE_MAX
    cache = TASK_CACHE_SPANS * 4096
    in_flight = MAX_CONNECTIONS * MAX_BODY * 9
    return baseline_kb + (queue + cache + in_flight) // 1024 + 128 * 1024


def _memory_kb(server: ServerProcess, field: str) -> int:
    """VmRSS or VmHWM of the server, summed over its receiver processes when it has some."""
    pid = server.proc.pid
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return sum(process_memory_kb(int(p)).get(field, 0) for p in [pid, *children])


def run_burst(data_dir: Path, seconds: float, senders: int = 8,
              server_args: tuple[str, ...] = ()) -> dict:
    """Run the burst, then check the server and every acknowledged span."""
    server = ServerProcess(data_dir, [*OVERLOAD_ARGS, *server_args]).start()
    time.sleep(0.5)
    baseline = _memory_kb(server, "VmRSS")
    burst = Burst()
    stop = threading.Event()
    until = time.monotonic() + seconds
    hard_stop = until + 60
    watcher = threading.Thread(target=_watch, args=(server, stop, burst))
    threads = [threading.Thread(target=_sender, args=(server, i + 1, i % 2 == 0, until,
                                                      hard_stop, burst))
               for i in range(senders)]
    try:
        watcher.start()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=max(1.0, hard_stop - time.monotonic()))
        stop.set()
        watcher.join()
        assert server.proc.poll() is None, "the server died under load"
        peak = _memory_kb(server, "VmHWM")
    finally:
        stop.set()
        exit_code = server.stop()
    assert exit_code == 0, server.log[-2000:]
    return _check(server, burst, baseline, peak)


def _check(server: ServerProcess, burst: Burst, baseline: int, peak: int) -> dict:
    refusals = burst.statuses.get(429, 0) + burst.statuses.get(503, 0)
    assert refusals > 0, f"the load never exceeded capacity: {burst.statuses}"
    assert burst.missing_retry_after == 0
    assert not burst.health_failures, burst.health_failures[:5]
    bound = memory_bound_kb(baseline)
    assert peak <= bound, f"peak RSS {peak} KiB over the bound {bound} KiB"
    # Thousands of tasks: read them in bulk from the file of the stopped server.
    stored = stored_in_file(server.data_dir / "agentsla.duckdb",
                            [t.trace_id for t in burst.acked + burst.refused])
    problems = []
    for task in burst.acked:
        problems += mismatches(task, stored.get(task.trace_id, []))
    for task in burst.refused:  # a refused request must leave nothing behind
        if task.trace_id in stored:
            problems.append(f"refused task {task.trace_id} was stored")
    assert not problems, f"{len(problems)} problems, first: {problems[:3]}"
    return {"statuses": dict(sorted(burst.statuses.items(), key=str)),
            "acked_spans": 5 * len(burst.acked), "refused_spans": 5 * len(burst.refused),
            "baseline_rss_mib": round(baseline / 1024, 1),
            "peak_rss_mib": round(peak / 1024, 1),
            "max_sampled_rss_mib": round(max(burst.rss_samples, default=0) / 1024, 1),
            "bound_mib": round(memory_bound_kb(baseline) / 1024, 1)}


def test_burst_is_refused_with_retry_after_and_nothing_acked_is_lost(tmp_path: Path) -> None:
    figures = run_burst(tmp_path / "data", seconds=20)
    record("overload.txt", str(figures))


def test_burst_through_receiver_processes_stays_bounded(tmp_path: Path) -> None:
    # the writer's 429s reach the clients through the receivers; memory summed over processes
    figures = run_burst(tmp_path / "data", seconds=15, server_args=("--receivers", "2"))
    record("overload-receivers.txt", str(figures))


@pytest.mark.soak
def test_burst_soak(tmp_path: Path) -> None:
    figures = run_burst(tmp_path / "data", seconds=60, senders=12)
    record("overload-soak.txt", str(figures))


# --- slow and idle clients ------------------------------------------------------------------

READ_TIMEOUT = 2.0
SLACK = 3.0  # a loaded CI machine: the close may come this much later than the deadline


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    server = ServerProcess(tmp_path_factory.mktemp("guarded"),
                           ["--read-timeout", f"{READ_TIMEOUT}s", "--max-connections", "8",
                            "--keepalive-timeout", "2s"]).start()
    yield server
    server.stop()
    assert "Traceback" not in server.log, server.log[-3000:]


def _connect(server: ServerProcess) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.http_port), timeout=READ_TIMEOUT + SLACK)
    return sock


def _closed_after(sock: socket.socket, trickle: bytes = b"", every: float = 0.3) -> tuple[float, bytes]:
    """Trickle bytes (one per `every` seconds) until the server hangs up; return when and what."""
    began = time.monotonic()
    received = b""
    sock.settimeout(every)
    for byte in itertools.cycle(trickle or [None]):
        if time.monotonic() - began > READ_TIMEOUT + SLACK:
            break
        try:
            if byte is not None:
                sock.send(bytes([byte]))
            chunk = sock.recv(65536)
            if not chunk:
                return time.monotonic() - began, received
            received += chunk
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return time.monotonic() - began, received
    return time.monotonic() - began, received


def test_silent_connection_is_closed(guarded: ServerProcess) -> None:
    with _connect(guarded) as sock:
        elapsed, received = _closed_after(sock)
    assert READ_TIMEOUT - 0.5 <= elapsed <= READ_TIMEOUT + SLACK and received == b""


def test_trickled_headers_are_cut_off(guarded: ServerProcess) -> None:
    with _connect(guarded) as sock:
        sock.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n")
        elapsed, _ = _closed_after(sock, b"X-Slow: " + b"a" * 200)
    assert elapsed <= READ_TIMEOUT + SLACK, "a slowloris header kept its connection"


def test_trickled_body_gets_408_and_is_closed(guarded: ServerProcess) -> None:
    with _connect(guarded) as sock:
        sock.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/x-protobuf\r\nContent-Length: 5000\r\n\r\n")
        elapsed, received = _closed_after(sock, b"\x0a" * 5000)
    assert received.startswith(b"HTTP/1.1 408"), received[:200]
    assert elapsed <= READ_TIMEOUT + SLACK


def test_connections_beyond_the_cap_get_503_then_recover(guarded: ServerProcess) -> None:
    body = agent_task(99, 0, tag=0xB1).body
    idle = [_connect(guarded) for _ in range(8)]  # fill every slot with silent sockets
    try:
        time.sleep(0.3)
        refused = httpx.post(guarded.traces_url, content=body, headers=PROTO, timeout=10)
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        assert refused.headers["connection"] == "close"
        assert httpx.get(f"{guarded.api_url}/api/v1/health").status_code == 200  # own listener
    finally:
        for sock in idle:
            sock.close()
    deadline = time.monotonic() + READ_TIMEOUT + SLACK
    while time.monotonic() < deadline:  # the slots free up as the sockets go
        response = httpx.post(guarded.traces_url, content=body, headers=PROTO, timeout=10)
        if response.status_code == 200:
            break
        time.sleep(0.2)
    assert response.status_code == 200


def test_silent_sockets_free_their_slots_by_themselves(guarded: ServerProcess) -> None:
    body = agent_task(99, 1, tag=0xB1).body
    idle = [_connect(guarded) for _ in range(8)]  # held open by the client, never written to
    try:
        time.sleep(READ_TIMEOUT + SLACK)  # the server hangs up on them
        response = httpx.post(guarded.traces_url, content=body, headers=PROTO, timeout=10)
        assert response.status_code == 200, response.text
    finally:
        for sock in idle:
            sock.close()
