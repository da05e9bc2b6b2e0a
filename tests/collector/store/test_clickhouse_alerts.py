"""Alerts and incidents on `agentsla serve --store chdb:///path`, end to end.

A real server over the ClickHouse engine (chdb in-process) takes a failing task from the
OpenTelemetry SDK's OTLP/HTTP exporter, materializes it, evaluates a rule over ClickHouse SQL,
delivers the firing alert to a local webhook receiver and opens an incident whose enrichment
(snapshot, root causes, impact) also reads ClickHouse. Ghost work comes from the findings
detectors, which the ClickHouse store does not run yet: it is unknown (null), not zero.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
import yaml
from serverproc import ServerProcess

sys.path.insert(0, str(Path(__file__).parents[2] / "alerts"))
from alertkit import HookServer  # noqa: E402 - the alert tests' recording receiver

from test_clickhouse_serve import _send  # noqa: E402 - one failing task through the SDK

WAIT_S = 60.0  # a bound on waiting for what must happen, never a speed claim


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
    assert incident["impact"]["ghost_work"] == {"seconds": None, "tokens": None, "spans": None}
    causes = incident["root_causes"]
    assert (causes[0]["ffh_kind"], causes[0]["ffh_name"], causes[0]["ffh_reason"]) == \
        ("tool", "search", "timeout")
