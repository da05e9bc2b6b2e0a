"""PagerDuty Events v2 against a local endpoint: trigger, resolve, one dedup_key per group."""

from __future__ import annotations

import asyncio

import httpx
from notifykit import alert, notification

from agentsla.alerts.rules.evaluator import State
from agentsla.alerts.notify.pagerduty.config import PagerDutyConfig
from agentsla.alerts.notify.pagerduty.notifier import PagerDutyNotifier


def test_trigger_then_resolve_share_the_dedup_key(hook):
    async def go():
        async with httpx.AsyncClient() as client:
            pd = PagerDutyNotifier(PagerDutyConfig("R0UT1NGKEY", url=hook.url + "/v2/enqueue"), client)
            first = await pd.notify(notification(alert(severity="P0"), nid="a"))
            second = await pd.notify(notification(alert(severity="P0", state=State.RESOLVED), nid="b"))
            return first, second
    assert asyncio.run(go()) == ((False, None), (False, None))
    trigger, resolve = (d.json for d in hook.deliveries)
    assert hook.deliveries[0].path == "/v2/enqueue"
    assert trigger["event_action"] == "trigger" and resolve["event_action"] == "resolve"
    assert trigger["dedup_key"] == resolve["dedup_key"] and trigger["routing_key"] == "R0UT1NGKEY"
    payload = trigger["payload"]
    assert payload["severity"] == "critical" and payload["summary"].startswith("[FIRING:1] ToolErrorRateHigh P0")
    assert payload["custom_details"]["first_failing_hop"] == "tool search (timeout)"
    assert payload["custom_details"]["example_trace_ids"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert trigger["links"][0]["href"].startswith("http://dash/")
