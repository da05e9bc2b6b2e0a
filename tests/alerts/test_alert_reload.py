"""Reloading rule and routing files on a real `agentsla serve`: POST /-/reload and SIGHUP apply
good files, and a bad file keeps the running config and says why (in the answer and the log)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx
import pytest
import yaml
from serverproc import ServerProcess

ADMIN, ACME = "tok-admin", "tok-acme"


def _rule(name: str) -> dict:
    return {"alert": name, "expr": "task_success_rate [5m] < 0.5", "labels": {"severity": "P2"}}


def _write_rules(path: Path, *names: str) -> None:
    path.write_text(yaml.safe_dump({"groups": [{"name": "g", "rules": [_rule(n) for n in names]}]}))


def _write_routing(path: Path, receiver: str) -> None:
    path.write_text(yaml.safe_dump({
        "route": {"receiver": receiver},
        "receivers": [{"name": receiver, "webhook_configs": [{"url": "http://127.0.0.1:9/hook"}]}]}))


@pytest.fixture
def reloadable(tmp_path: Path):
    """A server whose rules and routing come from files, with an admin and a tenant token."""
    rules, routing = tmp_path / "rules.yaml", tmp_path / "routing.yaml"
    _write_rules(rules, "First")
    _write_routing(routing, "ops")
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(yaml.safe_dump({"*": ADMIN, "acme": ACME}))
    config = tmp_path / "agentsla.yaml"
    config.write_text(yaml.safe_dump({"alerts": {
        "default_rules": False, "slo_rules": False, "rule_files": [str(rules)],
        "routing_file": str(routing)}}))
    proc = ServerProcess(tmp_path / "data", extra_args=[
        "--config", str(config), "--api-tokens-file", str(tokens)]).start()
    try:
        yield proc, rules, routing
    finally:
        if proc.proc and proc.proc.poll() is None:
            proc.stop()


def _reload(proc: ServerProcess, token: str = ADMIN) -> httpx.Response:
    return httpx.post(f"{proc.api_url}/-/reload", headers={"Authorization": f"Bearer {token}"},
                      timeout=30)


def _rules(proc: ServerProcess) -> list[str]:
    answer = httpx.get(f"{proc.api_url}/api/v1/alerts", timeout=10,
                       headers={"Authorization": f"Bearer {ADMIN}"}).json()
    return [r["name"] for r in answer["rules"]]


def test_post_reload_applies_new_rule_and_routing_files(reloadable):
    proc, rules, routing = reloadable
    assert _rules(proc) == ["First"]
    _write_rules(rules, "First", "Second")
    _write_routing(routing, "oncall")
    answer = _reload(proc)
    assert answer.status_code == 200
    assert answer.json()["status"] == "success" and answer.json()["rules"] == 2
    assert _rules(proc) == ["First", "Second"]


def test_a_bad_file_keeps_the_running_config_and_says_why(reloadable):
    proc, rules, routing = reloadable
    rules.write_text("groups:\n  - name: g\n    rules:\n      - alert: Broken\n        expr: nonsense(\n")
    answer = _reload(proc)
    assert answer.status_code == 400
    assert answer.json()["status"] == "error" and str(rules) in answer.json()["error"]
    assert _rules(proc) == ["First"]                  # still the rules that loaded at start
    _write_rules(rules, "Fixed")
    _write_routing(routing, "")                       # a receiver without a name: refused too
    answer = _reload(proc)
    assert answer.status_code == 400 and str(routing) in answer.json()["error"]
    assert _rules(proc) == ["First"]
    last = httpx.get(f"{proc.api_url}/api/v1/alerts", timeout=10,
                     headers={"Authorization": f"Bearer {ADMIN}"}).json()["reload"]
    assert last["status"] == "error" and str(routing) in last["error"]
    proc.stop()
    assert "reload failed, keeping the running rules and routing" in proc.log


def test_sighup_reloads(reloadable):
    proc, rules, _ = reloadable
    _write_rules(rules, "AfterHangup")
    assert proc.proc is not None
    proc.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 30
    while _rules(proc) != ["AfterHangup"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _rules(proc) == ["AfterHangup"]
    assert proc.proc.poll() is None                   # SIGHUP did not stop the server


def test_reload_needs_an_admin_token(reloadable):
    proc, _, _ = reloadable
    assert _reload(proc, ACME).status_code == 403
    assert _reload(proc, "wrong").status_code == 401
