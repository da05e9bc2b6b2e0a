"""Alerts and incidents on `agentsla serve --store chdb:///path`, end to end.

A real server over the ClickHouse engine (chdb in-process) takes a failing task from the
OpenTelemetry SDK's OTLP/HTTP exporter, materializes it, evaluates a rule over ClickHouse SQL,
delivers the firing alert to a local webhook receiver and opens an incident whose enrichment
(snapshot, root causes, impact, findings) also reads ClickHouse: a second task whose crawler
ran on 2 s after its root ended is ghost work, in the impact and as a finding.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind
from serverproc import ServerProcess

sys.path.insert(0, str(Path(__file__).parents[2] / "alerts"))
from alertkit import HookServer  # noqa: E402 - the alert tests' recording receiver

from test_clickhouse_serve import _send  # noqa: E402 - one failing task through the SDK

WAIT_S = 120.0  # a bound on waiting for what must happen, never a speed claim: an incident
# snapshot over ClickHouse runs every findings question (seconds of CPU on this shared machine)


@pytest.fixture
def hook():
    with HookServer() as server:
        yield server


@pytest.fixture
def alerting_server(tmp_path: Path, hook):
    """`serve --store chdb://` with one P0 rule on the failure rate, routed to the hook."""
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"groups": [{"name": "ch", "rules": [{
        "alert": "TasksFailing", "expr": "task_failure_rate [5m] > 0.5",
        "labels": {"severity": "P0"}}]}]}))
    config = tmp_path / "agentsla.yaml"
    config.write_text(yaml.safe_dump({"alerts": {
        "default_rules": False, "slo_rules": False, "rule_files": [str(rules)],
        "evaluation_interval": "1s", "incidents": {"snapshot_interval": "1s"},
        "route": {"receiver": "hook", "group_wait": "0s", "group_interval": "1s"},
        "receivers": [{"name": "hook", "webhook_configs": [{"url": hook.url}]}]}}))
    proc = ServerProcess(tmp_path / "data", extra_args=[
        "--config", str(config), "--store", f"chdb://{tmp_path / 'chdb'}",
        "--materialize-interval", "0.2", "--root-grace", "0"]).start(timeout=60)
    yield proc
    if proc.proc and proc.proc.poll() is None:
        proc.stop()


def _send_ghost(url: str) -> None:
    """Task "ghosted": its root ended at now - 2.1 s, its crawler at now - 0.1 s (2 s later)."""
    provider = TracerProvider(resource=Resource.create({"service.name": "gw"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url)))
    tracer = provider.get_tracer("test")
    now = time.time_ns()
    root = tracer.start_span("POST /ask", kind=SpanKind.SERVER, start_time=now - 3 * 10**9,
                             attributes={"task.id": "ghosted", "tenant.id": "acme"})
    crawler = tracer.start_span(
        "crawler", context=trace.set_span_in_context(root), start_time=now - 29 * 10**8,
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "crawler"})
    root.end(end_time=now - 21 * 10**8)
    crawler.end(end_time=now - 1 * 10**8)
    provider.shutdown()


def _until(what, deadline_s: float = WAIT_S):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if (got := what()):
            return got
        time.sleep(0.2)
    raise AssertionError("never happened")


def test_a_rule_over_clickhouse_fires_to_a_webhook_and_opens_an_incident(alerting_server, hook):
    _send(alerting_server.traces_url)  # task "served": failed, blamed on tool search (timeout)
    delivered = _until(lambda: [d.json for d in hook.ok()
                                if d.json.get("status") == "firing"])
    alert = delivered[0]["alerts"][0]
    assert alert["labels"]["alertname"] == "TasksFailing"

    def enriched():
        listed = alerting_server.api("/api/v1/incidents").json()["incidents"]
        if not listed:
            return None
        doc = alerting_server.api(f"/api/v1/incidents/{listed[0]['id']}").json()
        return doc if (doc.get("impact") or {}).get("tasks") else None
    incident = _until(enriched)
    assert incident["impact"]["tasks"]["failed"] == 1
    _send_ghost(alerting_server.traces_url)  # after the onset: within the incident's time

    def ghosted():
        doc = enriched()
        return doc if doc and doc["impact"]["ghost_work"]["spans"] and any(
            f["type"] == "ghost_work" for f in doc["findings"]) else None
    incident = _until(ghosted)
    ghost = incident["impact"]["ghost_work"]
    assert (ghost["seconds"], ghost["tokens"], ghost["spans"]) == (pytest.approx(2.0), 0, 1)
    found = [f for f in incident["findings"] if f["type"] == "ghost_work"]
    assert [(f["hop"], f["evidence"]["spans"]) for f in found] == \
        [({"kind": "tool", "name": "crawler"}, 1)]
    entries = [e for e in incident["timeline"] if e["kind"] == "finding"
               and e["labels"]["type"] == "ghost_work"]
    assert [e["links"]["task_ids"] for e in entries] == [["ghosted"]]
    # the same finding from /api/v1/findings over ClickHouse, and in the task's own findings
    answer = alerting_server.api("/api/v1/findings", window="1h", kind="ghost_work")
    assert answer.status_code == 200
    assert [(f["rule"], f["hop"], [e["task_id"] for e in f["examples"]])
            for f in answer.json()["findings"]] == \
        [("work_after_cutoff", {"kind": "tool", "name": "crawler"}, ["ghosted"])]
    # one task's findings over ClickHouse look its traces up question by question (seconds of
    # CPU here): the read is bounded by WAIT_S, not the harness' 10 s
    one = httpx.get(f"{alerting_server.api_url}/api/v1/findings", timeout=WAIT_S,
                    params={"window": "1h", "task_id": "ghosted", "kind": "ghost_work"})
    assert one.status_code == 200, one.text
    assert [(f["rule"], f["hop"], [e["task_id"] for e in f["examples"]])
            for f in one.json()["findings"]] == \
        [("work_after_cutoff", {"kind": "tool", "name": "crawler"}, ["ghosted"])]
    causes = incident["root_causes"]
    assert (causes[0]["ffh_kind"], causes[0]["ffh_name"], causes[0]["ffh_reason"]) == \
        ("tool", "search", "timeout")
