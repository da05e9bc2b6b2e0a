"""Slack: readable text, top offenders first, "N more", under the size limit."""

from __future__ import annotations

import asyncio

import httpx
from notifykit import alert, notification

from agentsla.alerts.rules.evaluator import State
from agentsla.alerts.notify.slack.config import SlackConfig
from agentsla.alerts.notify.slack.notifier import MAX_TEXT, SlackNotifier, render


def test_top_offenders_and_more():
    n = notification(*(alert(hop=f"tool{i}", value=i / 100) for i in range(12)))
    text = render(n, 5)
    lines = text.splitlines()
    assert lines[0] == "*[FIRING:12] ToolErrorRateHigh P1*"
    assert lines[2].startswith("• hop_name=tool11: Tool tool11 fails 11% of calls | first failing hop: tool tool11 (timeout) | traces: ")
    assert "…and 7 more" in text and text.endswith("<http://dash/alerts?alertname=ToolErrorRateHigh|Open in agentsla>")


def test_stays_under_the_limit_with_huge_annotations():
    big = [alert(hop="x" * 5000 + str(i)) for i in range(50)]
    text = render(notification(*big), 50)
    assert len(text) <= MAX_TEXT and "more" in text


def test_posts_json_with_channel(hook):
    async def go():
        async with httpx.AsyncClient() as client:
            notifier = SlackNotifier(SlackConfig(hook.url, channel="#oncall"), client)
            return await notifier.notify(notification(alert(), alert(hop="b", state=State.RESOLVED)))
    assert asyncio.run(go()) == (False, None)
    body = hook.deliveries[0].json
    assert body["channel"] == "#oncall" and "Resolved:" in body["text"]
