"""Agent-shaped OTLP payloads with enumerable ids, and the checks the hardening tests share.

`agent_task(sender, seq)` builds one task (gateway root → agent → model, tool, model) whose
trace id encodes (sender, seq), so a test can list exactly what it sent and compare what the
API stored, attribute by attribute.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from otlpvalues import av

PROTO = {"Content-Type": "application/x-protobuf"}
ARTIFACTS = Path(__file__).parents[2] / "test-artifacts" / "hardening"
_BASE_NS = time.time_ns() - 600 * 10**9  # recent, so the tasks fall in default API windows


@dataclass
class SentTask:
    """One task as sent: its trace id, payload and the spans expected back, by span id."""

    trace_id: str
    body: bytes
    spans: dict[str, dict]
    outcome: str


def trace_id_of(sender: int, seq: int, tag: int = 0xA6) -> str:
    """Return the 32-hex trace id of task `seq` of `sender` (tag separates test runs)."""
    return f"{tag:02x}{sender:06x}{seq:024x}"


def agent_task(sender: int, seq: int, tag: int = 0xA6, pad: int = 0) -> SentTask:
    """Build one agent task of five spans; every third one fails at its model call."""
    trace_id = trace_id_of(sender, seq, tag)
    failed = seq % 3 == 2
    start = _BASE_NS + seq * 1_000_000
    specs = [  # (suffix, parent suffix, name, start offset ms, end offset ms, attributes)
        (1, None, "POST /agent", 0, 900, {"task.type": "support_chat", "tenant.id": f"t{sender}",
                                          "http.response.status_code": 500 if failed else 200,
                                          "budget.total_ms": 5000, "seq": seq,
                                          "note": "héllo ✓ " + "x" * pad}),
        (2, 1, "invoke_agent planner", 5, 890, {"gen_ai.operation.name": "invoke_agent",
                                                "gen_ai.agent.name": "planner",
                                                "agent.loop.limit": 8}),
        (3, 2, "chat gpt-4o", 10, 400, {"gen_ai.operation.name": "chat",
                                        "gen_ai.request.model": "gpt-4o",
                                        "gen_ai.usage.input_tokens": 100 + seq % 50,
                                        "gen_ai.usage.output_tokens": 20, "retry.attempt": 0,
                                        "hop.timeout_ms": 30000, "ratio": 0.25,
                                        "tags": ["a", "b"]}),
        (4, 2, "execute_tool search", 410, 600, {"gen_ai.operation.name": "execute_tool",
                                                 "gen_ai.tool.name": "search",
                                                 "idempotency.key": f"k-{sender}-{seq}"}),
        (5, 2, "chat gpt-4o-mini", 610, 880, {"gen_ai.operation.name": "chat",
                                              "gen_ai.request.model": "gpt-4o-mini",
                                              **({"error.type": "timeout"} if failed else {})}),
    ]
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.append(
        KeyValue(key="service.name", value=AnyValue(string_value=f"agent-{sender}")))
    scope = resource_spans.scope_spans.add()
    scope.scope.name = "hardening"
    expected: dict[str, dict] = {}
    for suffix, parent, name, t0, t1, attrs in specs:
        span = scope.spans.add()
        span.trace_id = bytes.fromhex(trace_id)
        span.span_id = bytes.fromhex(f"{suffix:02x}" + trace_id[-14:])
        if parent:
            span.parent_span_id = bytes.fromhex(f"{parent:02x}" + trace_id[-14:])
        span.name = name
        span.kind = 2 if parent is None else 3
        span.start_time_unix_nano = start + t0 * 1_000_000
        span.end_time_unix_nano = start + t1 * 1_000_000
        if failed and suffix in (1, 5):
            span.status.code = 2
            span.status.message = "model timed out"
        span.attributes.extend(KeyValue(key=k, value=av(v)) for k, v in attrs.items())
        expected[span.span_id.hex()] = {
            "name": name, "parent_span_id": span.parent_span_id.hex() or None,
            "start_ns": span.start_time_unix_nano, "end_ns": span.end_time_unix_nano,
            "attributes": {k: list(v) if isinstance(v, (list, tuple)) else v
                           for k, v in attrs.items()}}
    return SentTask(trace_id, request.SerializeToString(), expected,
                    "failed" if failed else "success")


def flatten(nodes: list[dict]) -> list[dict]:
    """Flatten a span tree as the API returns it (children nested under `children`)."""
    out: list[dict] = []
    stack = list(nodes)
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node.get("children") or [])
    return out


def stored_spans(client: httpx.Client, api_url: str, trace_id: str) -> list[dict]:
    """Return the stored spans of a trace (empty when the API knows no such trace)."""
    response = client.get(f"{api_url}/api/v1/traces/{trace_id}", timeout=30)
    if response.status_code == 404:
        return []
    assert response.status_code == 200, response.text
    return flatten(response.json()["spans"])


def stored_in_file(db_path: Path, trace_ids: list[str]) -> dict[str, list[dict]]:
    """Read the spans of many traces straight from a stopped server's DuckDB file (bulk check)."""
    import duckdb
    import pyarrow as pa

    con = duckdb.connect(str(db_path), read_only=True)
    try:
        con.register("wanted", pa.table({"trace_id": pa.array(trace_ids, pa.string())}))
        rows = con.execute("select trace_id, span_id, parent_span_id, name, start_ns, end_ns, "
                           "attributes from spans where trace_id in (select trace_id from wanted)"
                           ).fetchall()
    finally:
        con.close()
    out: dict[str, list[dict]] = {}
    for trace_id, span_id, parent, name, start, end, attributes in rows:
        out.setdefault(trace_id, []).append({
            "span_id": span_id, "parent_span_id": parent, "name": name, "start_ns": start,
            "end_ns": end, "attributes": json.loads(attributes)})
    return out


def mismatches(sent: SentTask, stored: list[dict]) -> list[str]:
    """List every difference between a task as sent and as stored (empty: stored exactly)."""
    problems = []
    ids = [s["span_id"] for s in stored]
    if len(ids) != len(set(ids)):
        problems.append(f"{sent.trace_id}: duplicate spans stored {sorted(ids)}")
    if set(ids) != set(sent.spans):
        problems.append(f"{sent.trace_id}: stored span ids {sorted(set(ids))} != sent "
                        f"{sorted(sent.spans)}")
    for span in stored:
        want = sent.spans.get(span["span_id"])
        if want is None:
            continue
        got = {key: span.get(key) for key in want}
        if got != want:
            problems.append(f"{sent.trace_id}/{span['span_id']}: stored {got} != sent {want}")
    return problems


def process_memory_kb(pid: int) -> dict[str, int]:
    """Return VmRSS and VmHWM (peak RSS) of a process, in KiB, from /proc/PID/status."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0])
    return values


def record(name: str, text: str) -> None:
    """Write a measured figure under test-artifacts/hardening/ and print it."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / name).write_text(text + "\n")
    print(f"[hardening] {name}: {text}")
