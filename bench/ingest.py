"""Ingest benchmark: spans/s decode-only and end to end (OTLP/HTTP protobuf -> committed -> tasks).

    python bench/ingest.py --tasks 20000 --senders 4 --cores 1 --receivers 0,1,2 [--gzip]
                           [--children-first]

End to end runs `agentsla serve` pinned to `--cores` CPUs (sched_setaffinity before it starts,
so every thread and receiver process inherits it) and posts pre-built protobuf requests of 500
spans from this process, on the other CPU when one is left, over `--senders` keep-alive
connections; a request counts once answered 200 (committed, tasks and rollups included), a
429/503 is retried after its Retry-After. Reported per run: acknowledged spans/s, the server
process tree's CPU per span (utime + stime from /proc), p50/p99 request latency at capacity and
paced at `--load-fraction` of it, and the tree's peak RSS (VmHWM summed over its processes).
The same load against a sink that only parses the requests (same uvicorn + starlette + protobuf
stack, pinned the same way) gives the baseline: the ratio to it is the figure that carries
across machines. `--writer-only` times decode + normalize and the writer in-process instead;
`--stages` prints each stage's CPU per span in-process (decode, normalize, the writer's parts).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gzip
import http.client
import json
import math
import multiprocessing
import os
import platform
import pstats
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import duckdb
import httpx
import uvicorn
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from serverproc import ServerProcess, free_port  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import Response  # noqa: E402
from starlette.routing import Route  # noqa: E402

from agentsla.collector.receivers.decode import decode_body  # noqa: E402
from agentsla.collector.processing.normalize import normalize_request  # noqa: E402
from agentsla.collector.store.database import open_store  # noqa: E402
from agentsla.collector.store import writer as writer_module  # noqa: E402
from agentsla.collector.store.writer import TaskWriter  # noqa: E402
from agentsla.config import load_config  # noqa: E402

SPANS_PER_TASK = 10
T = TypeVar("T")
_ALL_CPUS = sorted(os.sched_getaffinity(0))
_SINK_REPEAT = 5


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


def _new_scope(requests: list[ExportTraceServiceRequest]):
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.extend([_kv("service.name", "agent-platform"),
                                         _kv("deployment.environment", "bench")])
    scope = resource.scope_spans.add()
    scope.scope.name = "bench"
    requests.append(request)
    return scope


def build_payloads(tasks: int, tasks_per_request: int, seed: int = 7,
                   children_first: bool = False, now_ns: int | None = None) -> list[bytes]:
    """Serialized ExportTraceServiceRequests of `tasks_per_request` tasks each.

    `children_first`: each task's root (the span with task.id) comes one request after its
    other spans, as a batch span processor exports spans as they end (one request more).
    `now_ns`: the clock the spans' times are drawn back from (default: now).
    """
    rng = random.Random(seed)
    now_ns = now_ns or time.time_ns()
    requests: list[ExportTraceServiceRequest] = []
    for first in range(0, tasks, tasks_per_request):
        scope = _new_scope(requests)
        for n in range(first, min(tasks, first + tasks_per_request)):
            build_task(scope, rng, n, now_ns)
    if children_first:
        spans = [list(request.resource_spans[0].scope_spans[0].spans) for request in requests]
        split, requests = requests, []
        for k in range(len(split) + 1):
            scope = _new_scope(requests)
            scope.spans.extend(s for s in (spans[k] if k < len(split) else ()) if s.parent_span_id)
            scope.spans.extend(s for s in (spans[k - 1] if k else ()) if not s.parent_span_id)
    return [request.SerializeToString() for request in requests]


@contextlib.contextmanager
def scratch_store(prefix: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """A fresh DuckDB store in a temp dir for one in-process writer run; removed afterwards."""
    data_dir = Path(tempfile.mkdtemp(prefix=prefix))
    con = open_store(data_dir / "agentsla.duckdb")
    try:
        yield con
    finally:
        con.close()
        shutil.rmtree(data_dir, ignore_errors=True)


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
    profiler = cProfile.Profile() if profile else None
    with scratch_store("agentsla-wbench-") as con:
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
                      "cpu_us_per_span": round(1e6 * statistics.median(t[1] for t in timings)
                                               / spans, 1),
                      "runs_ms_per_batch": [round(1000 * t[0] / len(payloads), 1) for t in timings]})
    return {"modes": modes,
            "rollups_on_vs_off": modes[1]["ms_per_batch"] / modes[0]["ms_per_batch"],
            "rollups_on_vs_off_cpu": modes[1]["cpu_ms_per_batch"] / modes[0]["cpu_ms_per_batch"]}


def bench_stages(payloads: list[bytes], rollups: bool) -> dict:
    """CPU per span of each stage of the ingest path, in-process: decode, normalize, and the
    writer's parts (a stage's time includes the stages it calls; `insert <table>` includes
    building its Arrow table). Timers wrap the writer's methods on one instance."""
    limits = load_config().ingest
    spent: dict[str, float] = {}

    def timed(label: str, function: Callable) -> Callable:
        def run(*args, **kwargs):
            started = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - started
        return run

    requests = [timed("decode", decode_body)(body, "application/x-protobuf", None, limits)
                for body in payloads]
    batches = [timed("normalize", normalize_request)(request, limits, time.time_ns()).rows
               for request in requests]
    materialize, mark_changed = writer_module.materialize, writer_module.mark_changed
    with scratch_store("agentsla-sbench-") as con:
        try:
            writer = TaskWriter(con, load_config().tasks, rollups=rollups)
            writer.write(batches[0])  # warm: first-use imports (pyarrow's pandas shim) are not a stage
            insert = writer._insert
            writer._insert = lambda table, *args: timed(f"writer: insert {table}", insert)(table, *args)
            for name in ("_probe", "_upsert_tasks", "_apply_rekeys", "_read_tasks"):
                setattr(writer, name, timed(f"writer: {name.strip('_')}", getattr(writer, name)))
            writer.rollups.flush = timed("writer: rollups flush", writer.rollups.flush)
            writer_module.materialize = timed("writer: materialize (in upsert_tasks)", materialize)
            writer_module.mark_changed = timed("writer: dirty minutes (in upsert_tasks)", mark_changed)
            writer.con = _CommitTimed(con, timed)
            for rows in batches[1:]:
                timed("writer (all)", writer.write)(rows)
        finally:
            writer_module.materialize, writer_module.mark_changed = materialize, mark_changed
    counts = {"decode": sum(map(len, batches)), "normalize": sum(map(len, batches))}
    written = sum(map(len, batches[1:]))
    return {label: round(1e6 * seconds / counts.get(label, written), 1)
            for label, seconds in sorted(spent.items(), key=lambda item: -item[1])}


class _CommitTimed:
    """The writer's connection, its `commit` statements timed as a stage of their own."""

    def __init__(self, con, timed: Callable) -> None:
        self._con = con
        self._commit = timed("writer: commit", con.execute)

    def execute(self, sql: str, *args):
        return (self._commit if sql == "commit" else self._con.execute)(sql, *args)

    def __getattr__(self, name: str):
        return getattr(self._con, name)


class _Load:
    """Sender processes, one keep-alive connection each: closed-loop (as fast as answers come)
    or paced (request i due `i / rate` seconds after the start). Processes, not threads, so that
    the load generator's own interpreter is not what limits a fast server."""

    def __init__(self, url: str, payloads: list[bytes], senders: int, gzip_: bool,
                 rate: float | None = None) -> None:
        self.address = httpx.URL(url)
        self.bodies = [gzip.compress(body, 6) if gzip_ else body for body in payloads]
        self.headers = {"Content-Type": "application/x-protobuf",
                        **({"Content-Encoding": "gzip"} if gzip_ else {})}
        self.senders = senders
        self.rate = rate
        self.latencies: list[float] = []  # seconds, one per request answered 200
        self.refusals = 0  # 429/503 answers (each retried after its Retry-After)

    def run(self) -> float:
        """Send every body until it is answered 200; return the wall time it took."""
        context = multiprocessing.get_context("fork")
        results = context.Queue()
        started = time.perf_counter()
        senders = [context.Process(target=self._sender, args=(k, started, results))
                   for k in range(self.senders)]
        for sender in senders:
            sender.start()
        for _ in senders:
            latencies, refusals = results.get()
            self.latencies += latencies
            self.refusals += refusals
        elapsed = time.perf_counter() - started
        for sender in senders:
            sender.join()
        if any(sender.exitcode for sender in senders):
            raise RuntimeError("a sender failed (see its traceback above)")
        return elapsed

    def _sender(self, k: int, started: float, results) -> None:
        connection = http.client.HTTPConnection(self.address.host, self.address.port, timeout=120)
        latencies, refusals = [], 0
        for index in range(k, len(self.bodies), self.senders):
            if self.rate:
                time.sleep(max(0.0, started + index / self.rate - time.perf_counter()))
            while True:
                sent = time.perf_counter()
                try:
                    connection.request("POST", self.address.path, self.bodies[index],
                                       self.headers)
                    response = connection.getresponse()
                except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
                    # the server closed the keep-alive connection while it was idle (a paced
                    # sender can wait longer than its keep-alive timeout): send again
                    connection.close()
                    continue
                content = response.read()
                if response.status == 200:
                    latencies.append(time.perf_counter() - sent)
                    break
                if response.status not in (429, 503):
                    raise RuntimeError(f"the server answered {response.status}: {content[:300]!r}")
                refusals += 1
                time.sleep(float(response.getheader("retry-after", "1")))
                if response.getheader("connection", "") == "close":
                    connection.close()
        connection.close()
        results.put((latencies, refusals))


def _percentile_ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else math.nan


def _tree(pid: int) -> list[int]:
    """The pid and every live descendant (receiver processes, a sink's workers)."""
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                todo.extend(int(child) for child in task.read_text().split())
    return pids


def _cpu_seconds(pid: int, tree: bool = True) -> float:
    """utime + stime of a process (tree), from /proc/<pid>/stat."""
    total = 0
    for member in _tree(pid) if tree else [pid]:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / os.sysconf("SC_CLK_TCK")


def _rss_mib(pid: int, field: str = "VmHWM") -> float:
    """Peak (VmHWM) or current (VmRSS) resident memory of a process tree, summed, in MiB."""
    total = 0
    for member in _tree(pid):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith(f"{field}:"):
                    total += int(line.split()[1])
    return total / 1024


def _cpus(cores: int) -> tuple[set[int], set[int]]:
    """CPUs for the server and for the load: disjoint when the machine has a core to spare."""
    available = _ALL_CPUS
    server = set(available[:cores])
    return server, (set(available[cores:]) or set(available))


def _pinned_start(cores: int, start: Callable[[], T]) -> tuple[T, set[int]]:
    """Start a server process on `cores` CPUs (it and its threads inherit the affinity), then
    move this process (the load) onto the other CPUs."""
    server_cpus, load_cpus = _cpus(cores)
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, server_cpus)
    try:
        started = start()
    finally:
        os.sched_setaffinity(0, mine)
    os.sched_setaffinity(0, load_cpus)  # the sender processes inherit it
    return started, server_cpus


def _measure(pid: int, url: str, payloads: list[bytes], spans: int, args,
             commits: Callable[[], int] = lambda: 0) -> dict:
    """Capacity with closed-loop senders, then latency at `--load-fraction` of that capacity.

    `commits`: the server's commit count so far (its groups' size at capacity; 0: unknown)."""
    cpu_before, top_before = _cpu_seconds(pid), _cpu_seconds(pid, tree=False)
    commits_before = commits()
    load = _Load(url, payloads, args.senders, args.gzip)
    elapsed = load.run()
    committed = commits() - commits_before
    cpu = _cpu_seconds(pid) - cpu_before
    top = _cpu_seconds(pid, tree=False) - top_before
    result = {"spans_per_s": round(spans / elapsed), "seconds": round(elapsed, 2),
              "cpu_us_per_span": round(1e6 * cpu / spans, 1),
              # the server's own process: with --receivers, the writer process alone
              "main_process_cpu_us_per_span": round(1e6 * top / spans, 1),
              "p50_ms": round(_percentile_ms(load.latencies, 0.5), 1),
              "p99_ms": round(_percentile_ms(load.latencies, 0.99), 1),
              "refusals_429_503": load.refusals,
              "spans_per_commit": round(spans / committed) if committed else None}
    if args.load_fraction:
        paced_payloads = payloads[:max(1, len(payloads) // 2)]
        rate = args.load_fraction * (len(payloads) / elapsed)
        paced = _Load(url, paced_payloads, args.senders * 4, args.gzip, rate=rate)
        paced.run()
        result["paced"] = {"requests_per_s": round(rate, 1),
                           "p50_ms": round(_percentile_ms(paced.latencies, 0.5), 1),
                           "p99_ms": round(_percentile_ms(paced.latencies, 0.99), 1),
                           "refusals_429_503": paced.refusals}
    result["peak_rss_mib"] = round(_rss_mib(pid))
    return result


def bench_end_to_end(payloads: list[bytes], spans: int, args, server_args: list[str]) -> dict:
    """Acknowledged spans/s, CPU per span, latency and RSS of a real `agentsla serve`."""
    data_dir = Path(tempfile.mkdtemp(prefix="agentsla-bench-"))
    server, cpus = _pinned_start(args.cores, ServerProcess(data_dir, server_args).start)
    try:
        result = _measure(server.proc.pid, server.traces_url, payloads, spans, args,
                          lambda: server.api("/api/v1/health").json()["ingest"]["commits"])
        stored = server.api("/api/v1/sla", window="2h").json()
        result["tasks_finished"] = stored["totals"]["finished"]
        result["final_rss_mib"] = round(_rss_mib(server.proc.pid, "VmRSS"))
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    return {"server_args": server_args, "server_cpus": sorted(cpus), **result}


def bench_sink(payloads: list[bytes], spans: int, args) -> dict:
    """The same load against a sink that only parses each request (the same HTTP stack)."""
    port = free_port()

    def start() -> subprocess.Popen:
        return subprocess.Popen([sys.executable, __file__, "--serve-sink", str(port),
                                 "--cores", str(args.cores)], start_new_session=True)

    sink, cpus = _pinned_start(args.cores, start)
    try:
        url = f"http://127.0.0.1:{port}/v1/traces"
        _wait_listening(url)
        # the sink is ~50x faster: repeat the requests so that its run is long enough to time
        result = _measure(sink.pid, url, payloads * _SINK_REPEAT, spans * _SINK_REPEAT, args)
    finally:
        os.killpg(sink.pid, signal.SIGTERM)  # the sink and its forked workers
        sink.wait(30)
    return {"server_cpus": sorted(cpus), **result}


def _wait_listening(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            httpx.get(url, timeout=1)
            return
        time.sleep(0.1)
    raise TimeoutError(f"{url} did not start listening")


def serve_sink(port: int, processes: int) -> None:
    """Answer POST /v1/traces 200 after decompressing and parsing the body: the ceiling a
    Python OTLP receiver on uvicorn + starlette + upb protobuf can reach (`processes` workers
    sharing one listening socket)."""
    sock = socket.create_server(("127.0.0.1", port))
    for _ in range(processes - 1):
        if os.fork() == 0:
            break
    ok = ExportTraceServiceResponse().SerializeToString()

    async def traces(request: Request) -> Response:
        body = await request.body()
        if request.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        ExportTraceServiceRequest.FromString(body)
        return Response(ok, media_type="application/x-protobuf")

    app = Starlette(routes=[Route("/v1/traces", traces, methods=["POST", "GET"])])
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False,
                                           lifespan="off"))
    server.run(sockets=[sock])


def main() -> None:
    """Run the benchmarks and print one JSON document with the machine it ran on."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20_000)
    parser.add_argument("--tasks-per-request", type=int, default=50)
    parser.add_argument("--children-first", action="store_true",
                        help="send each task's root (with task.id) one request after its other "
                             "spans, as a batch span processor exports them")
    parser.add_argument("--senders", type=int, default=4, help="keep-alive connections")
    parser.add_argument("--cores", type=int, choices=(1, 2), default=1,
                        help="CPUs the server (and the sink) are pinned to")
    parser.add_argument("--gzip", action="store_true", help="send gzip-compressed bodies")
    parser.add_argument("--receivers", default="0",
                        help="comma-separated `serve --receivers` values to run, e.g. 0,1,2")
    parser.add_argument("--load-fraction", type=float, default=0.8,
                        help="after the capacity run, pace half the requests at this fraction "
                             "of the measured capacity and report their latency (0: skip)")
    parser.add_argument("--no-sink", action="store_true", help="skip the parsing-sink baseline")
    parser.add_argument("--server-arg", action="append", default=[], dest="server_args",
                        help="extra `agentsla serve` flag (repeat), e.g. --server-arg=--memory-limit=1GB")
    parser.add_argument("--writer-only", action="store_true",
                        help="only time the writer in-process, rollups off then on")
    parser.add_argument("--serve-sink", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--writer-repeat", type=int, default=3,
                        help="alternated rounds of the writer timing (rollups off, on)")
    parser.add_argument("--stages", action="store_true",
                        help="only print each stage's CPU per span in-process (rollups on)")
    parser.add_argument("--profile", action="store_true",
                        help="print the writer's cProfile (first round, each mode) to stderr")
    args = parser.parse_args()
    if args.serve_sink:
        serve_sink(args.serve_sink, args.cores)
        return
    payloads = build_payloads(args.tasks, args.tasks_per_request,
                              children_first=args.children_first)
    spans = args.tasks * SPANS_PER_TASK
    result = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                         f"Python {platform.python_version()}",
              "date": time.strftime("%Y-%m-%d"), "spans": spans,
              "spans_per_request": args.tasks_per_request * SPANS_PER_TASK,
              "children_first": args.children_first,
              "decode_spans_per_s": bench_decode(payloads)}
    if args.stages:
        result["stages_cpu_us_per_span"] = bench_stages(payloads, rollups=True)
        print(json.dumps(result, indent=2))
        return
    if args.writer_only:
        # the same batches through the writer, rollups off then on: their cost per batch
        result["writer"] = bench_writer_rollups(payloads, spans, args.writer_repeat, args.profile)
        print(json.dumps(result, indent=2))
        return
    result.update(cores=args.cores, gzip=args.gzip, senders=args.senders)
    if not args.no_sink:
        result["sink"] = bench_sink(payloads, spans, args)
    runs = []
    for receivers in args.receivers.split(","):
        extra = [] if receivers == "0" else [f"--receivers={receivers}"]
        run = bench_end_to_end(payloads, spans, args, [*extra, *args.server_args])
        if "sink" in result:
            run["ratio_to_sink"] = round(run["spans_per_s"] / result["sink"]["spans_per_s"], 4)
        runs.append(run)
    result["end_to_end"] = runs
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
