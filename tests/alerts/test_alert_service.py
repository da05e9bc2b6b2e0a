"""The vertical slice: YAML rule → evaluator (for) → routing/grouping → signed webhook, with the
state and the notification log surviving a restart."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from queryrows import NS, T0, insert, span

from agentsla.alerts.notify.webhook.notifier import verify
from agentsla.alerts.service import AlertService
from agentsla.config import load_config
from agentsla.queries.engines.duckdb import cursor_stores

SECRET = "whsec_c2VjcmV0LWtleS1mb3ItdGVzdHM="
T = T0 / NS  # unix seconds of the fixture's "now"

RULES = """\
groups:
  - name: tools
    rules:
      - alert: ToolErrorRateHigh
        expr: hop_error_rate{hop_kind="tool"} by (hop_name) [2m] > 0.02
        for: 1m
        min_tasks: 20
        labels: {severity: P1}
        annotations:
          summary: "Tool {{ $labels.hop_name }} fails {{ $value | percent }} of calls"
"""


def _config(tmp_path: Path, hook_url: str, **extra):
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    alerts = {"default_rules": False, "slo_rules": False, "rule_files": [str(rules)],
              "evaluation_interval": "1s",
              "route": {"receiver": "hook", "group_by": ["alertname"], "group_wait": "10s",
                        "group_interval": "1m", "repeat_interval": "1h"},
              "receivers": [{"name": "hook", "webhook_configs": [{"url": hook_url, "secret": SECRET}]}],
              "delivery": {"initial_backoff": "1s", "max_backoff": "1m"}, **extra}
    return dataclasses.replace(load_config(environ={}), alerts=alerts)


def _tool_traffic(con, tool: str, calls: int, errors: int, end_ms: float) -> None:
    insert(con, spans=[span(f"{tool}{end_ms:.0f}-{i:04d}", None, end_ms - 100, end_ms - (i % 50), task_id=f"{tool}{end_ms:.0f}-t{i}",
                            hop_kind="tool", hop_name=tool,
                            error_type="timeout" if i < errors else None) for i in range(calls)])


def _service(con, tmp_path, hook):
    return AlertService(_config(tmp_path, hook.url), cursor_stores(con), tmp_path / "data",
                        "http://dash.example")


def test_rule_to_signed_webhook_and_resolve(con, tmp_path, hook):
    _tool_traffic(con, "search", 30, 10, 50_000)   # 10 of 30 calls fail, ending before T+50s
    service = _service(con, tmp_path, hook)

    async def scenario():
        await service.tick(T + 60)    # condition holds: pending
        assert [a["state"] for a in service.current(T + 60)] == ["pending"]
        await service.tick(T + 119)   # 59 s: still pending
        assert hook.deliveries == []
        await service.tick(T + 120)   # for: 1m reached: firing; group opens, waits 10 s
        assert hook.deliveries == []
        await service.tick(T + 130)   # group_wait over: one notification
        assert len(hook.ok()) == 1
        await service.tick(T + 171)   # window [T+51, T+171) holds no calls: resolved
        await service.tick(T + 190)   # group_interval (1m after T+130) reached
        await service.stop()

    asyncio.run(scenario())
    first, second = hook.ok()
    for delivery in (first, second):
        assert verify(SECRET, delivery.headers, delivery.body)
    fired = first.json
    assert fired["version"] == "4" and fired["status"] == "firing"
    alert = fired["alerts"][0]
    assert alert["labels"] == {"alertname": "ToolErrorRateHigh", "hop_kind": "tool",
                               "hop_name": "search", "severity": "P1"}
    assert alert["annotations"]["summary"] == "Tool search fails 33.3% of calls"
    assert alert["annotations"]["first_failing_hop"]  # present on every notification
    assert second.json["status"] == "resolved"
    assert second.json["alerts"][0]["endsAt"] != "0001-01-01T00:00:00Z"
    assert first.headers["webhook-id"] != second.headers["webhook-id"]


def test_restart_in_the_middle_of_a_group_neither_repeats_nor_drops(con, tmp_path, hook):
    _tool_traffic(con, "search", 30, 10, 50_000)
    _tool_traffic(con, "browse", 30, 10, 50_000)
    _tool_traffic(con, "browse", 30, 10, 130_000)   # browse keeps failing a while longer

    async def first_life():
        service = _service(con, tmp_path, hook)
        await service.tick(T + 60)
        await service.tick(T + 130)
        await service.tick(T + 140)   # one notification: both tools firing
        await service.stop()

    async def second_life():
        service = _service(con, tmp_path, hook)
        await service.tick(T + 150)   # restored: still firing, a new group waits 10 s
        await service.tick(T + 160)   # flush: nothing changed, nothing sent
        assert len(hook.ok()) == 1
        await service.tick(T + 175)   # search resolved (window [T+55, T+175) empty for it)
        await service.tick(T + 220)   # flush at group_interval: one resolved notification
        await service.stop()

    asyncio.run(first_life())
    assert len(hook.ok()) == 1
    assert {a["labels"]["hop_name"] for a in hook.ok()[0].json["alerts"]} == {"search", "browse"}
    asyncio.run(second_life())
    sent = hook.ok()
    assert len(sent) == 2
    statuses = {a["labels"]["hop_name"]: a["status"] for a in sent[1].json["alerts"]}
    assert statuses == {"search": "resolved", "browse": "firing"}
