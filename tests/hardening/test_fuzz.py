"""Structured fuzzing of OTLP input: in-process (many examples) and against one real server.

Oracle: every request is answered 200 (possibly with partial_success), 400 or 413, exactly as
the in-process decode → normalize pipeline predicts; nothing raises anything else; every task
materializes (parent cycles included); the server stays healthy and logs no traceback. The soak
variant runs ≥ 100,000 payloads in-process and records the count in
test-artifacts/hardening/fuzz-count.txt.
"""

from __future__ import annotations

import gzip
import random
import time

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest, ExportTraceServiceResponse)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from agentload import PROTO, agent_task, record, stored_spans
from agentsla.config import load_config
from otlpfuzz import check_in_process, deep_value, mutate, payloads, to_json
from serverproc import ServerProcess

MAX_BODY = 1024**2
CONFIG = load_config({"max_body_bytes": MAX_BODY})
COUNTS: dict[str, int] = {}
FUZZ = settings(deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])


def _count(kind: str, n: int = 1) -> None:
    COUNTS[kind] = COUNTS.get(kind, 0) + n


def _span(request: ExportTraceServiceRequest, trace: bytes, span: bytes, parent: bytes = b""):
    out = request.resource_spans.add().scope_spans.add().spans.add(
        trace_id=trace, span_id=span, parent_span_id=parent, name="s",
        start_time_unix_nano=1_700_000_000 * 10**9, end_time_unix_nano=1_700_000_001 * 10**9)
    return out


def _big_cases() -> dict[str, tuple[bytes, dict[str, str], set[int]]]:
    """Hand-built extremes: (body, headers, acceptable statuses)."""
    cases = {}
    trace = bytes.fromhex("c0" * 16)
    many = ExportTraceServiceRequest()
    _span(many, trace, b"\x01" * 8).attributes.extend(
        KeyValue(key=f"k{i}", value=AnyValue(int_value=i)) for i in range(10_000))
    cases["10k-attributes"] = (many.SerializeToString(), PROTO, {200})
    huge = ExportTraceServiceRequest()
    _span(huge, trace, b"\x02" * 8).attributes.add(key="big").value.string_value = "x" * 900_000
    cases["900k-attribute-value"] = (huge.SerializeToString(), PROTO, {200})
    cases["900k-attribute-value-json"] = (to_json(huge), {"Content-Type": "application/json"},
                                          {200})
    deep = ExportTraceServiceRequest()
    _span(deep, trace, b"\x03" * 8).attributes.add(key="deep").value.CopyFrom(deep_value(40))
    cases["depth-40"] = (deep.SerializeToString(), PROTO, {200})
    deeper = ExportTraceServiceRequest()
    _span(deeper, trace, b"\x04" * 8).attributes.add(key="deep").value.CopyFrom(deep_value(2000))
    # past protobuf's nesting limit: the span is rejected alone (partial success), not the request
    cases["depth-2000"] = (deeper.SerializeToString(), PROTO, {200})
    nested_json = b'{"resourceSpans":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    cases["json-nesting-100k"] = (nested_json, {"Content-Type": "application/json"}, {400})
    cycle = ExportTraceServiceRequest()
    for i in range(1, 60):  # a 59-span parent cycle, plus a self-parent and an orphan
        _span(cycle, bytes.fromhex("c1" * 16), bytes([i]) * 8, bytes([i % 59 + 1]) * 8)
    _span(cycle, bytes.fromhex("c1" * 16), b"\x7f" * 8, b"\x7f" * 8)
    _span(cycle, bytes.fromhex("c1" * 16), b"\x7e" * 8, b"\x55" * 8)
    cases["parent-cycle"] = (cycle.SerializeToString(), PROTO, {200})
    cases["gzip-bomb"] = (gzip.compress(b"\x00" * 200 * 1024**2, 9),
                          {**PROTO, "Content-Encoding": "gzip"}, {413})
    body = agent_task(7, 7, tag=0xC2).body
    cases["truncated"] = (body[:-3], PROTO, {400})
    cases["empty"] = (b"", PROTO, {200})
    return cases


BIG = _big_cases()


@pytest.mark.parametrize("name", list(BIG))
def test_extremes_in_process(name: str) -> None:
    body, headers, statuses = BIG[name]
    outcome = check_in_process(body, headers["Content-Type"], headers.get("Content-Encoding"),
                               CONFIG.ingest, CONFIG.tasks)
    assert (outcome == "refused") == (statuses != {200}), outcome


def run_structured(examples: int) -> None:
    """Check `examples` generated payloads in-process against the oracle."""
    @settings(FUZZ, max_examples=examples)
    @given(payloads())
    def check(payload) -> None:
        check_in_process(*payload, CONFIG.ingest, CONFIG.tasks)
        _count("structured")

    check()


def test_structured_fuzz_in_process() -> None:
    run_structured(60)


def _seed_corpus() -> list[tuple[bytes, str]]:
    corpus = [(agent_task(1, i, tag=0xC3).body, "application/x-protobuf") for i in range(4)]
    corpus += [(to_json(ExportTraceServiceRequest.FromString(b)), "application/json")
               for b, _ in corpus[:2]]
    corpus += [(BIG[name][0], "application/x-protobuf") for name in ("parent-cycle", "depth-40")]
    return corpus


def run_mutations(count: int, seed: int) -> dict[str, int]:
    """Mutate the seed corpus `count` times; every mutant must pass the oracle."""
    rng = random.Random(seed)
    corpus = _seed_corpus()
    outcomes: dict[str, int] = {}
    for _ in range(count):
        body, ctype = rng.choice(corpus)
        mutant = mutate(body, rng)
        outcome = check_in_process(mutant, ctype, None, CONFIG.ingest, CONFIG.tasks)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if outcome == "ok" and rng.random() < 0.05 and len(corpus) < 200:
            corpus.append((mutant, ctype))  # keep interesting survivors as new seeds
    return outcomes


def test_mutation_fuzz_in_process() -> None:
    outcomes = run_mutations(20_000, seed=1)
    _count("mutations", sum(outcomes.values()))
    assert outcomes.get("ok", 0) and outcomes.get("refused", 0), outcomes


# --- over the wire -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory):
    server = ServerProcess(tmp_path_factory.mktemp("fuzz"),
                           ["--max-body-bytes", str(MAX_BODY)]).start()
    yield server
    server.stop()
    assert "Traceback" not in server.log and "write failed" not in server.log, server.log[-3000:]


def _post_and_check(client: httpx.Client, server: ServerProcess, body: bytes,
                    headers: dict[str, str]) -> int:
    expected = check_in_process(body, headers["Content-Type"], headers.get("Content-Encoding"),
                                CONFIG.ingest, CONFIG.tasks)
    response = client.post(server.traces_url, content=body, headers=headers)
    assert response.status_code in (200, 400, 413), (response.status_code, response.text[:300])
    assert (response.status_code != 200) == (expected == "refused"), (expected, response.text)
    if response.status_code == 200 and headers["Content-Type"] == "application/x-protobuf":
        answer = ExportTraceServiceResponse.FromString(response.content)
        assert (answer.partial_success.rejected_spans > 0) == (expected == "partial")
    return response.status_code


def _healthy(client: httpx.Client, server: ServerProcess) -> None:
    assert server.proc.poll() is None, "the server crashed"
    assert client.get(f"{server.api_url}/api/v1/health", timeout=10).status_code == 200


def run_wire_fuzz(server: ServerProcess, examples: int) -> dict[str, int]:
    """Post `examples` generated payloads, checking health every 50."""
    statuses: dict[int, int] = {}
    client = httpx.Client(timeout=30)

    @settings(FUZZ, max_examples=examples)
    @given(payloads())
    def post(payload) -> None:
        body, ctype, encoding = payload
        headers = {"Content-Type": ctype, **({"Content-Encoding": encoding} if encoding else {})}
        status = _post_and_check(client, server, body, headers)
        statuses[status] = statuses.get(status, 0) + 1
        if sum(statuses.values()) % 50 == 0:
            _healthy(client, server)

    try:
        post()
        _healthy(client, server)
    finally:
        client.close()
    return statuses


def test_extremes_over_the_wire(fuzz_server: ServerProcess) -> None:
    with httpx.Client(timeout=60) as client:
        for name, (body, headers, statuses) in BIG.items():
            began = time.monotonic()
            status = _post_and_check(client, fuzz_server, body, headers)
            assert status in statuses, name
            assert time.monotonic() - began < 30, f"{name} took too long"
            _healthy(client, fuzz_server)
        # the cycle materialized: its task exists and counts every span
        task = client.get(f"{fuzz_server.api_url}/api/v1/tasks/{'c1' * 16}").json()
        assert task["span_count"] == 61, task
        spans = stored_spans(client, fuzz_server.api_url, "c1" * 16)
        assert len(spans) == 61
        wide = stored_spans(client, fuzz_server.api_url, "c0" * 16)
        by_id = {s["span_id"]: s for s in wide}
        assert len(by_id["01" * 8]["attributes"]) == 1024 + 1  # the limit, plus the drop count
        assert by_id["01" * 8]["attributes"]["agentsla.dropped_attributes"] == 10_000 - 1024
        assert len(by_id["02" * 8]["attributes"]["big"]) == 65536 + len("...[truncated]")


def test_structured_fuzz_over_the_wire(fuzz_server: ServerProcess) -> None:
    statuses = run_wire_fuzz(fuzz_server, 150)
    _count("wire", sum(statuses.values()))
    assert statuses.get(200) and statuses.get(400), statuses


@pytest.mark.soak
def test_fuzz_soak(tmp_path) -> None:
    outcomes = run_mutations(100_000, seed=2)
    run_structured(300)
    server = ServerProcess(tmp_path / "data", ["--max-body-bytes", str(MAX_BODY)]).start()
    try:
        statuses = run_wire_fuzz(server, 600)
    finally:
        server.stop()
    assert "Traceback" not in server.log, server.log[-3000:]
    total = sum(outcomes.values()) + 300 + sum(statuses.values())
    assert total >= 100_000
    record("fuzz-count.txt", f"{total} payloads (in-process mutations {outcomes}, "
                             f"structured 300, over the wire {statuses})")


def test_zz_record_default_fuzz_count() -> None:
    """Record how many payloads the default (non-soak) variants fuzzed in this session."""
    if COUNTS:
        record("fuzz-count-default.txt", f"{sum(COUNTS.values())} payloads {COUNTS}")
