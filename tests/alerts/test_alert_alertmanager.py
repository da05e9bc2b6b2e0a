"""agentsla's alerts arrive at, group in and resolve in a real Alertmanager (Debian 0.25)."""

from __future__ import annotations

import asyncio
import time

import httpx
from alertkit import FakeQuery

from agentsla.alerts.rules.evaluator import Evaluator
from agentsla.alerts.rules.expr import parse
from agentsla.alerts.notify.alertmanager.config import AlertmanagerConfig
from agentsla.alerts.notify.alertmanager.notifier import AlertmanagerPusher
from agentsla.alerts.rules.groups import Rule, RuleGroup


def _am_alerts(url: str, **params) -> list[dict]:
    return httpx.get(url + "/api/v2/alerts", params=params, timeout=5).json()


def _wait(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out waiting for Alertmanager")


def test_alerts_arrive_group_and_resolve(alertmanager):
    rule = Rule("ToolErrorRateHigh", parse('hop_error_rate{hop_kind="tool"} by (hop_name) [2m] > 0.02'),
                labels={"severity": "P1"}, annotations={"summary": "{{ $labels.hop_name }} failing"})
    evaluator = Evaluator([RuleGroup("g", (rule,))], interval_s=1)
    q = FakeQuery()
    q.set("hop_error_rate", ({"hop_kind": "tool", "hop_name": "search"}, 0.3, 50),
          ({"hop_kind": "tool", "hop_name": "browse"}, 0.1, 50))

    async def scenario():
        async with httpx.AsyncClient() as client:
            pusher = AlertmanagerPusher([AlertmanagerConfig(alertmanager)], client,
                                        resend_delay_s=60, eval_interval_s=1)
            now = time.time() - 5
            await pusher.push(evaluator.eval(now, q, force=True), now)
            assert pusher.errors == {alertmanager: None}
            firing = _wait(lambda: [a for a in _am_alerts(alertmanager) if a["status"]["state"] == "active"])
            assert sorted(a["labels"]["hop_name"] for a in firing) == ["browse", "search"]
            search = next(a for a in firing if a["labels"]["hop_name"] == "search")
            assert search["annotations"]["summary"] == "search failing"
            assert search["annotations"]["first_failing_hop"] == "tool search (timeout)"
            # Alertmanager groups them by its own route (here: alertname)
            groups = _wait(lambda: httpx.get(alertmanager + "/api/v2/alerts/groups", timeout=5).json())
            assert len(groups) == 1 and len(groups[0]["alerts"]) == 2
            # search recovers: the resolved alert is sent with its real endsAt
            q.set("hop_error_rate", ({"hop_kind": "tool", "hop_name": "browse"}, 0.1, 50))
            later = time.time()  # a resolution is in the past when Alertmanager gets it
            await pusher.push(evaluator.eval(later, q, force=True), later)
            remaining = _wait(lambda: (lambda a: a if len(a) == 1 else None)(
                _am_alerts(alertmanager, active="true")))
            assert remaining[0]["labels"]["hop_name"] == "browse"
            # Alertmanager still lists nothing for search as active
            assert not [a for a in _am_alerts(alertmanager) if a["labels"]["hop_name"] == "search"
                        and a["status"]["state"] == "active"]

    asyncio.run(scenario())


def test_firing_alerts_are_resent_and_valid_for_a_few_resend_periods(alertmanager):
    rule = Rule("Dead", parse("spans_ingested [10m] == 0"), labels={"severity": "P1"})
    evaluator = Evaluator([RuleGroup("g", (rule,))])
    q = FakeQuery()
    q.set("spans_ingested", ({}, 0.0))

    async def scenario():
        async with httpx.AsyncClient() as client:
            pusher = AlertmanagerPusher([AlertmanagerConfig(alertmanager)], client,
                                        resend_delay_s=60, eval_interval_s=10)
            now = time.time()
            alerts = evaluator.eval(now, q, force=True)
            await pusher.push(alerts, now)
            sent_at = pusher._last_sent[alertmanager]
            await pusher.push(alerts, now + 30)      # unchanged, not yet due: not sent
            assert pusher._last_sent[alertmanager] == sent_at
            await pusher.push(alerts, now + 60)      # resend_delay passed: sent again
            assert pusher._last_sent[alertmanager] == now + 60
            [alert] = _wait(lambda: _am_alerts(alertmanager))
            ends = alert["endsAt"]
            assert ends > alert["startsAt"]  # endsAt ~ now + 60 + 4 x 60 s

    asyncio.run(scenario())
