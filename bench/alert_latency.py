"""Alert latency: a failing span's ingestion to the P0 webhook notification, through a real server.

    python bench/alert_latency.py --runs 5

Each run starts a fresh `agentsla serve` (tests/serverproc.py) with a config holding one P0 rule
(`task_success_rate [1m] < 0.99`, `for: 0`, min_tasks 5), `evaluation_interval: 10s`,
`group_wait: 0s` and a webhook receiver on a loopback HTTP server in this process. It posts
healthy tasks (raw OTLP/HTTP protobuf), waits a random 0-10 s so the failure lands at a random
phase of the evaluation cycle, then at T0 posts failing tasks and records when the webhook
receives the firing notification. Reported: min/median/max of T0 -> notification, and of T0 ->
the OTLP request being acknowledged (committed, tasks materialized).

    python bench/alert_latency.py --runs 5 --store-spans 10000000 --open-incident

The open-incident variant: the store first holds `--store-spans` spans of bench/queries.py's
synthetic 24 h of traffic (generated once, copied into each run's data dir), and a P1 rule
(`hop_error_rate{hop_kind="tool"} by (hop_name) [30m] > 0`) fires on that traffic at start, so
an incident is open and its enrichment (snapshots of the last hour, Pareto, every detector,
impact) runs every 10 s. Each run waits for the incident's first snapshot, then measures as
above; the P0 rule is scoped to the bench's own task type, so the background traffic cannot
fire it. `--store-spans` without `--open-incident` is the baseline at the same size.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import yaml
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from serverproc import ServerProcess  # noqa: E402

ALERT = "BenchTaskSuccessLow"
TASK_TYPE = "bench_p0"  # the P0 rule watches only the bench's own tasks
RULES = {"groups": [{"name": "bench", "rules": [{
    "alert": ALERT, "expr": f'task_success_rate{{task_type="{TASK_TYPE}"}} [1m] < 0.99',
    "for": "0s", "min_tasks": 5, "labels": {"severity": "P0"},
    "annotations": {"summary": "success {{ $value | percent }}"}}]}]}
INCIDENT_RULE = {"alert": "BenchToolErrors", "for": "0s", "labels": {"severity": "P1"},
                 "expr": 'hop_error_rate{hop_kind="tool"} by (hop_name) [30m] > 0'}


def _kv(key: str, value) -> KeyValue:
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def tasks_request(rng: random.Random, count: int, failing: bool, tag: str) -> bytes:
    """An OTLP request of `count` tasks (gateway root + a tool call), ending now."""
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.append(_kv("service.name", "bench-platform"))
    scope = resource.scope_spans.add()
    scope.scope.name = "bench"
    end = time.time_ns()
    start = end - 2 * 10**9
    for n in range(count):
        trace = rng.getrandbits(128).to_bytes(16, "big")
        root_id, tool_id = rng.getrandbits(64) | 1, rng.getrandbits(64) | 1
        root = scope.spans.add()
        root.trace_id, root.span_id = trace, root_id.to_bytes(8, "big")
        root.name, root.kind = "POST /v1/tasks", 2
        root.start_time_unix_nano, root.end_time_unix_nano = start, end
        root.attributes.extend([
            _kv("task.id", f"{tag}-{n}"), _kv("task.type", TASK_TYPE), _kv("hop.kind", "gateway"),
            _kv("budget.total_ms", 30000),
            _kv("http.response.status_code", 500 if failing else 200)])
        tool = scope.spans.add()
        tool.trace_id, tool.span_id = trace, tool_id.to_bytes(8, "big")
        tool.parent_span_id = root.span_id
        tool.name, tool.kind = "execute_tool search", 3
        tool.start_time_unix_nano, tool.end_time_unix_nano = start + 10**8, end - 10**8
        tool.attributes.extend([_kv("gen_ai.operation.name", "execute_tool"),
                                _kv("gen_ai.tool.name", "search"), _kv("hop.kind", "tool")])
        if failing:
            for span in (root, tool):
                span.status.code = 2
                span.status.message = "tool search failed"
            tool.attributes.append(_kv("error.type", "tool_error"))
    return request.SerializeToString()


class Receiver:
    """A loopback webhook that timestamps every notification (time.monotonic)."""

    def __init__(self) -> None:
        self.received: list[tuple[float, dict]] = []
        self.event = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                """Quiet."""

            def do_POST(self) -> None:  # noqa: N802
                """Record the notification."""
                at = time.monotonic()
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.received.append((at, json.loads(body)))
                outer.event.set()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def firing_after(self, since: float, timeout: float) -> float | None:
        """Monotonic time of the first firing notification of ALERT received after `since`."""
        deadline = time.monotonic() + timeout
        while True:
            for at, payload in list(self.received):
                if at >= since and payload.get("status") == "firing" and any(
                        a["labels"].get("alertname") == ALERT for a in payload["alerts"]):
                    return at
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.event.clear()
            self.event.wait(min(left, 0.5))

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()


def write_config(folder: Path, webhook: str, interval: str, incident: bool = False) -> Path:
    """The rule file and the config file of one run (with the incident rule if asked)."""
    rules = folder / "rules.yaml"
    groups = RULES["groups"] + ([{"name": "incident", "rules": [INCIDENT_RULE]}] if incident
                                else [])
    rules.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    config = folder / "config.yaml"
    config.write_text(yaml.safe_dump({"alerts": {
        "evaluation_interval": interval, "default_rules": False, "slo_rules": False,
        "rule_files": [str(rules)],
        "incidents": {"snapshot_interval": "10s", "snapshot_window": "1h"},
        "route": {"receiver": "bench", "group_by": ["alertname"], "group_wait": "0s",
                  "group_interval": "10s", "repeat_interval": "1h"},
        "receivers": [{"name": "bench", "webhook_configs": [{"url": webhook}]}]}},
        sort_keys=False))
    return config


def post(client: httpx.Client, server: ServerProcess, body: bytes) -> None:
    """POST one OTLP request and require 200 (acknowledged = committed)."""
    response = client.post(server.traces_url, content=body,
                           headers={"Content-Type": "application/x-protobuf"})
    response.raise_for_status()


def _first_snapshot(server: ServerProcess, timeout: float) -> float:
    """Wait until an incident is open and enriched; return the seconds that took."""
    started, deadline = time.monotonic(), time.monotonic() + timeout
    while time.monotonic() < deadline:
        for incident in server.api("/api/v1/incidents", state="open").json()["incidents"]:
            doc = server.api(f"/api/v1/incidents/{incident['id']}").json()
            if any(e["kind"] == "snapshot" for e in doc.get("timeline", [])):
                return time.monotonic() - started
        time.sleep(1.0)
    raise SystemExit(f"no enriched open incident within {timeout:.0f}s; log:\n{server.log[-3000:]}")


def _data_dir(folder: Path, store: Path | None) -> Path:
    data = folder / "data"
    data.mkdir(parents=True)
    if store is not None:
        shutil.copy(store, data / "agentsla.duckdb")
    return data


def one_run(rng: random.Random, receiver: Receiver, interval_s: float, interval: str,
            healthy: int, failing: int, timeout: float, store: Path | None = None,
            incident: bool = False) -> dict:
    """Fresh server; healthy traffic; random phase; failing tasks at T0; wait for the page."""
    folder = Path(tempfile.mkdtemp(prefix="agentsla-alert-bench-"))
    config = write_config(folder, receiver.url, interval, incident)
    server = ServerProcess(_data_dir(folder, store), extra_args=["--config", str(config)],
                           env={"AGENTSLA_LOST_GRACE": "7d"}).start(timeout=300)
    started = time.monotonic()
    try:
        enriched_after = _first_snapshot(server, 600) if incident else None
        with httpx.Client(timeout=30) as client:
            post(client, server, tasks_request(rng, healthy, False, f"ok-{rng.random()}"))
            time.sleep(rng.uniform(0, interval_s))  # a random phase of the evaluation cycle
            body = tasks_request(rng, failing, True, f"bad-{rng.random()}")
            t0 = time.monotonic()
            if receiver.firing_after(started, 0) is not None:
                raise SystemExit("the rule fired on healthy traffic alone")
            post(client, server, body)
            acked = time.monotonic()
        fired = receiver.firing_after(t0, timeout)
        totals = server.api("/api/v1/sla", window="15m", task_type=TASK_TYPE).json()["totals"]
        if (totals["finished"], totals.get("success")) != (healthy + failing, healthy):
            raise SystemExit(f"unexpected task outcomes: {totals}")
    finally:
        server.stop(timeout=300)
        shutil.rmtree(folder, ignore_errors=True)
    if fired is None:
        raise SystemExit(f"no firing notification within {timeout:.0f}s; server log:\n"
                         + server.log[-3000:])
    return {"notified_s": fired - t0, "acked_s": acked - t0, "enriched_after_s": enriched_after}


def machine() -> str:
    """CPU model, cores, Python."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}"


def _stats(values: list[float]) -> dict:
    return {"min": round(min(values), 2), "median": round(statistics.median(values), 2),
            "max": round(max(values), 2)}


def main() -> None:
    """Run N measurements and print one JSON document."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--evaluation-interval", default="10s")
    parser.add_argument("--healthy", type=int, default=50, help="healthy tasks before T0")
    parser.add_argument("--failing", type=int, default=10, help="failing tasks posted at T0")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="give up on a run after this many seconds")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--store-spans", type=int, default=0,
                        help="spans of synthetic traffic stored before the runs (bench/queries.py)")
    parser.add_argument("--store-dir", type=Path,
                        help="keep (or reuse, when it holds agentsla.duckdb) the generated store")
    parser.add_argument("--open-incident", action="store_true",
                        help="a P1 rule opens an incident on the stored traffic before T0")
    args = parser.parse_args()
    from agentsla.config import parse_duration

    interval_s = parse_duration(args.evaluation_interval)
    rng = random.Random(args.seed)
    store, generated = _store(args.store_spans, args.store_dir)
    receiver = Receiver()
    runs = []
    try:
        for i in range(args.runs):
            runs.append(one_run(rng, receiver, interval_s, args.evaluation_interval,
                                args.healthy, args.failing, args.timeout, store,
                                args.open_incident))
            print(f"run {i + 1}/{args.runs}: notified after {runs[-1]['notified_s']:.2f}s "
                  f"(acknowledged after {runs[-1]['acked_s']:.3f}s)", file=sys.stderr)
    finally:
        receiver.close()
    print(json.dumps({
        "machine": machine(), "load_average": [round(x, 2) for x in os.getloadavg()],
        "evaluation_interval": args.evaluation_interval, "for": "0s", "group_wait": "0s",
        "store": generated, "open_incident": args.open_incident,
        "runs": len(runs), "ingest_to_notification_s": _stats([r["notified_s"] for r in runs]),
        "ingest_ack_s": _stats([r["acked_s"] for r in runs]),
        "enriched_after_start_s": [r["enriched_after_s"] and round(r["enriched_after_s"], 1)
                                   for r in runs],
        "each_s": [round(r["notified_s"], 2) for r in runs]}, indent=2))


def _store(spans: int, folder: Path | None) -> tuple[Path | None, dict | None]:
    """The stored traffic every run starts from: generated once (or reused from `folder`)."""
    if not spans and folder is None:
        return None, None
    folder = folder or Path(tempfile.mkdtemp(prefix="agentsla-alert-store-"))
    db = folder / "agentsla.duckdb"
    if db.exists():
        return db, {"reused": str(db)}
    folder.mkdir(parents=True, exist_ok=True)
    spec = importlib.util.spec_from_file_location("bench_queries", Path(__file__).parent / "queries.py")
    assert spec and spec.loader
    store_bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(store_bench)
    return db, store_bench.generate(db, spans, time.time_ns(),
                                    log=lambda m: print(m, file=sys.stderr))


if __name__ == "__main__":
    main()
