"""Ingest benchmark: spans/s decode-only and end to end (OTLP/HTTP protobuf -> committed -> tasks).

    python bench/ingest.py --tasks 20000 --senders 4

End to end runs `agentsla serve` pinned to one core (taskset) and posts pre-built protobuf
payloads from this process on the other core; it stops when every request is acknowledged (so
committed, tasks included) and reports spans/s and the server's peak RSS (VmHWM).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from serverproc import ServerProcess  # noqa: E402

from agentsla.collector.receivers.decode import decode_body  # noqa: E402
from agentsla.collector.processing.normalize import normalize_request  # noqa: E402
from agentsla.collector.store.database import open_store  # noqa: E402
from agentsla.collector.store.writer import TaskWriter  # noqa: E402
from agentsla.config import load_config  # noqa: E402

SPANS_PER_TASK = 10


def _kv(key: str, value) -> KeyValue:
    if isinstance(value, bool):
        return KeyValue(key=key, value=AnyValue(bool_value=value))
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    if isinstance(value, float):
        return KeyValue(key=key, value=AnyValue(double_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def _add_span(scope, rng: random.Random, trace: bytes, span_id: int, parent: int | None,
              name: str, start: int, dur_ms: float, attrs: dict) -> None:
    span = scope.spans.add()
    span.trace_id = trace
    span.span_id = span_id.to_bytes(8, "big")
    if parent:
        span.parent_span_id = parent.to_bytes(8, "big")
    span.name = name
    span.kind = 2 if parent is None else 3
    span.start_time_unix_nano = start
    span.end_time_unix_nano = start + int(dur_ms * 1e6)
    span.attributes.extend(_kv(k, v) for k, v in attrs.items())
    if rng.random() < 0.03:
        span.status.code = 2
        span.status.message = "read timed out"


def build_task(scope, rng: random.Random, n: int, now_ns: int) -> None:
    """One realistic agent task: gateway, queue, agent, 4 model calls, 3 tool calls."""
    trace = rng.getrandbits(128).to_bytes(16, "big")
    base = (n + 1) * 100
    start = now_ns - rng.randint(0, 3600) * 10**9
    _add_span(scope, rng, trace, base + 1, None, "POST /v1/agent", start, 9000, {
        "task.id": f"task-{n}", "task.type": rng.choice(["chat", "research", "triage"]),
        "tenant.id": f"tenant-{n % 17}", "hop.kind": "gateway", "hop.timeout_ms": 60000,
        "budget.total_ms": 60000, "http.response.status_code": 200, "http.request.method": "POST",
        "url.path": "/v1/agent", "user_agent.original": "python-httpx/0.28"})
    _add_span(scope, rng, trace, base + 2, base + 1, "queue wait", start + 10**6, 200, {
        "messaging.system": "redis", "messaging.destination.name": "tasks",
        "budget.remaining_ms": 59990})
    _add_span(scope, rng, trace, base + 3, base + 1, "invoke_agent planner", start + 3 * 10**8,
              8500, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner",
                     "agent.loop.limit": 8, "budget.remaining_ms": 59700})
    t = start + 4 * 10**8
    for i in range(4):
        _add_span(scope, rng, trace, base + 4 + i, base + 3, "chat gpt-4o", t, 1200, {
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
            "gen_ai.provider.name": "openai", "gen_ai.usage.input_tokens": 800 + 400 * i,
            "gen_ai.usage.output_tokens": 120, "gen_ai.response.time_to_first_chunk": 0.4,
            "hop.timeout_ms": 30000, "retry.attempt": 0, "retry.max": 2,
            "budget.remaining_ms": 59000 - 1500 * i, "server.address": "api.openai.com"})
        t += 1300 * 10**6
    for i in range(3):
        _add_span(scope, rng, trace, base + 8 + i, base + 3, "execute_tool search", t, 300, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search",
            "hop.timeout_ms": 10000, "budget.remaining_ms": 52000 - 400 * i})
        t += 400 * 10**6


def build_payloads(tasks: int, tasks_per_request: int, seed: int = 7) -> list[bytes]:
    """Serialized ExportTraceServiceRequests of `tasks_per_request` tasks each."""
    rng = random.Random(seed)
    now_ns = time.time_ns()
    payloads = []
    for first in range(0, tasks, tasks_per_request):
        request = ExportTraceServiceRequest()
        resource = request.resource_spans.add()
        resource.resource.attributes.extend([_kv("service.name", "agent-platform"),
                                             _kv("deployment.environment", "bench")])
        scope = resource.scope_spans.add()
        scope.scope.name = "bench"
        for n in range(first, min(tasks, first + tasks_per_request)):
            build_task(scope, rng, n, now_ns)
        payloads.append(request.SerializeToString())
    return payloads


def bench_decode(payloads: list[bytes]) -> float:
    """Spans per second of decode + normalize on this core."""
    limits = load_config().ingest
    spans = 0
    started = time.perf_counter()
    for body in payloads:
        request = decode_body(body, "application/x-protobuf", None, limits)
        spans += len(normalize_request(request, limits, time.time_ns()).rows)
    return spans / (time.perf_counter() - started)


def bench_writer(payloads: list[bytes], rollups: bool,
                 profile: bool = False) -> tuple[float, float]:
    """Wall and CPU seconds of the writer alone over all batches (rows in, committed out)."""
    limits = load_config().ingest
    batches = [normalize_request(decode_body(body, "application/x-protobuf", None, limits),
                                 limits, time.time_ns()).rows for body in payloads]
    data_dir = Path(tempfile.mkdtemp(prefix="agentsla-wbench-"))
    con = open_store(data_dir / "agentsla.duckdb")
    profiler = cProfile.Profile() if profile else None
    try:
        writer = TaskWriter(con, load_config().tasks, rollups=rollups)
        started, cpu = time.perf_counter(), time.process_time()
        if profiler:
            profiler.enable()
        for rows in batches:
            writer.write(rows)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    finally:
        if profiler:
            profiler.disable()
        con.close()
        shutil.rmtree(data_dir, ignore_errors=True)
    if profiler:
        print(f"-- writer profile, rollups {'on' if rollups else 'off'}", file=sys.stderr)
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(20)
    return elapsed, cpu


def bench_writer_rollups(payloads: list[bytes], spans: int, repeat: int, profile: bool) -> dict:
    """The writer's cost per batch with rollups off and on, alternated `repeat` times.

    Alternating makes both modes share the drift of a shared machine's load; each mode's
    median is reported, and their ratio, in wall time and in CPU time (which the load of other
    processes disturbs less).
    """
    runs: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for n in range(repeat):
        for rollups in (False, True):
            runs[rollups].append(bench_writer(payloads, rollups, profile and n == 0))
    modes = []
    for rollups, timings in runs.items():
        wall = statistics.median(t[0] for t in timings)
        modes.append({"rollups": rollups, "spans_per_s": spans / wall,
                      "ms_per_batch": 1000 * wall / len(payloads),
                      "cpu_ms_per_batch": 1000 * statistics.median(t[1] for t in timings)
                      / len(payloads),
                      "runs_ms_per_batch": [round(1000 * t[0] / len(payloads), 1) for t in timings]})
    return {"modes": modes,
            "rollups_on_vs_off": modes[1]["ms_per_batch"] / modes[0]["ms_per_batch"],
            "rollups_on_vs_off_cpu": modes[1]["cpu_ms_per_batch"] / modes[0]["cpu_ms_per_batch"]}


def _send_all(server: ServerProcess, payloads: list[bytes], senders: int) -> int:
    queue = list(reversed(payloads))
    lock = threading.Lock()
    retries = [0]

    def worker() -> None:
        with httpx.Client(timeout=120) as client:
            while True:
                with lock:
                    if not queue:
                        return
                    body = queue.pop()
                while True:
                    response = client.post(server.traces_url, content=body, headers={
                        "Content-Type": "application/x-protobuf"})
                    if response.status_code == 200:
                        break
                    retries[0] += 1
                    time.sleep(float(response.headers.get("retry-after", "1")))

    threads = [threading.Thread(target=worker) for _ in range(senders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return retries[0]


def _rss_mib(pid: int, field: str = "VmHWM") -> float:
    """Peak (VmHWM) or current (VmRSS) resident memory of a process, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def bench_end_to_end(payloads: list[bytes], tasks: int, senders: int,
                     server_args: list[str]) -> dict:
    """Spans/s through a real server pinned to one core, and its peak and final RSS."""
    data_dir = Path(tempfile.mkdtemp(prefix="agentsla-bench-"))
    server = ServerProcess(data_dir, server_args).start()
    if shutil.which("taskset"):
        subprocess.run(["taskset", "-pc", "0", str(server.proc.pid)], check=True,
                       capture_output=True)
        os.sched_setaffinity(0, {1} if os.cpu_count() and os.cpu_count() > 1 else {0})
    try:
        started = time.perf_counter()
        retries = _send_all(server, payloads, senders)
        elapsed = time.perf_counter() - started
        stored = server.api("/api/v1/sla", window="2h").json()
        rss = _rss_mib(server.proc.pid)
        final_rss = _rss_mib(server.proc.pid, "VmRSS")
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    return {"spans_per_s": tasks * SPANS_PER_TASK / elapsed, "seconds": elapsed,
            "retries_429": retries, "tasks_finished": stored["totals"]["finished"],
            "peak_rss_mib": rss, "final_rss_mib": final_rss, "server_args": server_args}


def main() -> None:
    """Run both benchmarks and print one JSON line with the machine it ran on."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20_000)
    parser.add_argument("--tasks-per-request", type=int, default=50)
    parser.add_argument("--senders", type=int, default=4)
    parser.add_argument("--server-arg", action="append", default=[], dest="server_args",
                        help="extra `agentsla serve` flag (repeat), e.g. --server-arg=--memory-limit=1GB")
    parser.add_argument("--writer-only", action="store_true",
                        help="only time the writer in-process, rollups off then on")
    parser.add_argument("--writer-repeat", type=int, default=3,
                        help="alternated rounds of the writer timing (rollups off, on)")
    parser.add_argument("--profile", action="store_true",
                        help="print the writer's cProfile (first round, each mode) to stderr")
    args = parser.parse_args()
    payloads = build_payloads(args.tasks, args.tasks_per_request)
    result = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                         f"Python {platform.python_version()}",
              "spans": args.tasks * SPANS_PER_TASK,
              "decode_spans_per_s": bench_decode(payloads)}
    # the same batches through the writer, rollups off then on: their cost per batch
    result["writer"] = bench_writer_rollups(payloads, args.tasks * SPANS_PER_TASK,
                                            args.writer_repeat, args.profile)
    if args.writer_only:
        print(json.dumps(result, indent=2))
        return
    result["end_to_end"] = bench_end_to_end(payloads, args.tasks, args.senders, args.server_args)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
