"""`agentsla demo` routes its alert rules, one receiver per tier, to its own webhook (console + file)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml

from agentsla.commands._demo_alerts import (CONFIG, DIGEST, NOTIFICATIONS, RULES,
                                            NotificationSink, summarize, write_demo_config)
from agentsla.config import load_config
from serverproc import free_port

PAYLOAD = {
    "version": "4", "status": "firing", "receiver": "demo-chat",
    "groupLabels": {"alertname": "ToolErrorRateHigh"},
    "commonLabels": {"alertname": "ToolErrorRateHigh", "severity": "P1"},
    "alerts": [
        {"status": "firing", "labels": {"alertname": "ToolErrorRateHigh", "severity": "P1",
                                        "hop_name": "query_orders_db"},
         "annotations": {"first_failing_hop": "tool query_orders_db (timeout)",
                         "example_task_ids": "task-1, task-2"}},
        {"status": "firing", "labels": {"alertname": "ToolErrorRateHigh", "severity": "P1",
                                        "hop_name": "search"}, "annotations": {}},
    ],
}


def test_summary_names_tier_alert_status_hop_and_task() -> None:
    line = summarize(PAYLOAD, "chat")
    assert line == ("P1 chat ToolErrorRateHigh FIRING [hop_name=query_orders_db] (+1 more)  "
                    "first failing hop: tool query_orders_db (timeout)  e.g. task task-1")
    resolved = summarize({**PAYLOAD, "status": "resolved", "alerts": [
        {**PAYLOAD["alerts"][1], "status": "resolved"}]})
    assert resolved.startswith("P1 ToolErrorRateHigh RESOLVED [hop_name=search]")
    assert "first failing hop: unknown" in resolved


def test_sink_appends_json_lines_once_per_webhook_id(tmp_path) -> None:
    notes: list[tuple] = []
    sink = NotificationSink(tmp_path / NOTIFICATIONS, lambda *note: notes.append(note)).start()
    try:
        for _ in range(2):  # a retry carries the same webhook-id
            r = httpx.post(sink.url + "/chat", json=PAYLOAD, headers={"webhook-id": "n1"},
                           timeout=5)
            assert r.status_code == 200
        assert httpx.post(sink.url, content=b"nope", timeout=5).status_code == 400
    finally:
        sink.stop()
    records = [json.loads(x) for x in (tmp_path / NOTIFICATIONS).read_text().splitlines()]
    assert len(records) == 1 and records[0]["webhook_id"] == "n1"
    assert records[0]["channel"] == "chat"
    assert records[0]["alerts"][0]["annotations"]["first_failing_hop"].startswith("tool")
    assert [n[:2] for n in notes] == [("chat", PAYLOAD)] and sink.count == 1
    assert notes[0][2] == records[0]["received_unix"]


def test_demo_config_merges_a_simple_user_config(tmp_path) -> None:
    url = "http://127.0.0.1:9/notify"
    path, note = write_demo_config(tmp_path, url, None, "http://127.0.0.1:8501")
    assert path == tmp_path / CONFIG and note is None
    config = load_config(config_file=path)  # valid for the server's loader
    hooks = {r["name"]: r["webhook_configs"][0]["url"] for r in config.alerts["receivers"]}
    assert hooks == {"demo-page": url + "/page", "demo-chat": url + "/chat",
                     "demo-digest": url + "/digest"}
    tiers = {r["matchers"][0]: r["receiver"] for r in config.alerts["route"]["routes"]}
    assert tiers == {'severity="P0"': "demo-page", 'severity="P2"': "demo-digest"}
    assert config.alerts["route"]["receiver"] == "demo-chat"  # P1 and anything else
    assert config.alerts["receivers"][2]["digest_configs"] == [{"path": str(tmp_path / DIGEST)}]
    assert config.alerts["rule_files"] == [str(tmp_path / RULES)] and (tmp_path / RULES).exists()
    assert config.alerts["default_rules"] is False
    user = tmp_path / "user.yaml"
    user.write_text(yaml.safe_dump({"api_port": 9999, "slos": [{"task_type": "chat",
                                                                 "objective": 0.99}],
                                    "alerts": {"evaluation_interval": "2s"}}))
    path, note = write_demo_config(tmp_path, url, str(user), None)
    config = load_config(config_file=path)
    assert note is None and config.server.api_port == 9999 and config.slos[0].objective == 0.99
    assert config.alerts["evaluation_interval"] == "2s"  # the user's keys win
    assert config.alerts["route"]["receiver"] == "demo-chat"
    # A user config with its own routing is used as it is.
    user.write_text(yaml.safe_dump({"alerts": {"route": {"receiver": "x"},
                                               "receivers": [{"name": "x"}]}}))
    path, note = write_demo_config(tmp_path, url, str(user), None)
    assert path == user and "routing from" in note


def _firing_with_hop(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        note = json.loads(line)
        if note["status"] == "firing" and any(
                a["annotations"].get("first_failing_hop") not in (None, "", "unknown")
                for a in note["alerts"]):
            out.append(note)
    return out


def test_demo_pages_a_replayed_schedule_then_stops_on_sigterm(tmp_path) -> None:
    """--schedule model_long_tail at speed 0: the demo's burn-rate P0 (for: 0) pages in seconds."""
    data = tmp_path / "demo"
    api_port = free_port()
    demo = subprocess.Popen(
        [sys.executable, "-m", "agentsla", "demo", "--data-dir", str(data), "--no-dashboard",
         "--otlp-http-port", str(free_port()), "--otlp-grpc-port", str(free_port()),
         "--api-port", str(api_port), "--seed", "3", "--schedule", "model_long_tail:300",
         "--speed", "0", "--history", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline and not _firing_with_hop(data / NOTIFICATIONS):
            assert demo.poll() is None, demo.stdout.read().decode(errors="replace")
            time.sleep(0.5)
        demo.send_signal(signal.SIGTERM)
        out, _ = demo.communicate(timeout=30)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    text = out.decode(errors="replace")
    assert demo.returncode == 0, text
    firing = _firing_with_hop(data / NOTIFICATIONS)
    assert firing, text
    page = [n for n in firing if n["commonLabels"].get("severity") == "P0"]
    assert page and page[0]["receiver"] == "demo-page" and page[0]["channel"] == "page"
    assert f"alerts     {data / NOTIFICATIONS}" in text
    assert " FIRING " in text and "first failing hop: " in text and "e.g. task task-" in text
    try:  # the server went down with the demo
        httpx.get(f"http://127.0.0.1:{api_port}/api/v1/health", timeout=1)
        raise AssertionError("the server still answers after the demo stopped")
    except httpx.HTTPError:
        pass
