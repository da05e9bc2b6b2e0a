"""The PagerDuty notifier: Events API v2 (https://developer.pagerduty.com/docs/events-api-v2/).

The dedup_key is a hash of the group key, so every notification of one group updates one
incident; a notification whose alerts are all resolved sends `resolve`.
"""

from __future__ import annotations

import hashlib
import json

import httpx

from agentsla.alerts.notify import alert_line, counts, hop_text, title
from agentsla.alerts.notify.pagerduty.config import PagerDutyConfig
from agentsla.alerts.notify.retry import post_json

SEVERITIES = {"P0": "critical", "P1": "error", "P2": "warning"}
MAX_SUMMARY = 1024


def dedup_key(group_key: str) -> str:
    """The incident key of an alert group."""
    return hashlib.sha256(group_key.encode()).hexdigest()


def event(notification: dict, config: PagerDutyConfig) -> dict:
    """Build the Events v2 body."""
    firing, _ = counts(notification)
    body = {"routing_key": config.routing_key, "dedup_key": dedup_key(notification["groupKey"]),
            "event_action": "trigger" if firing else "resolve"}
    if not firing:
        return body
    common = notification["commonLabels"]
    first = notification["alerts"][0]
    body["payload"] = {
        "summary": title(notification)[:MAX_SUMMARY],
        "source": config.source,
        "severity": SEVERITIES.get(common.get("severity", ""), "error"),
        "component": first["labels"].get("hop_name") or first["labels"].get("provider") or None,
        "group": first["labels"].get("task_type") or None,
        "class": common.get("alertname"),
        "custom_details": {
            "firing": [alert_line(a) for a in notification["alerts"] if a["status"] == "firing"][:20],
            "first_failing_hop": hop_text(first),
            "example_trace_ids": first["annotations"].get("example_trace_ids"),
            "context": first.get("context"),  # the hop as data, its share, example ids
        },
    }
    body["payload"] = {k: v for k, v in body["payload"].items() if v is not None}
    if first["generatorURL"]:
        body["links"] = [{"href": first["generatorURL"], "text": "agentsla"}]
    return body


class PagerDutyNotifier:
    """Send trigger/resolve events to PagerDuty."""

    kind = "pagerduty"

    def __init__(self, config: PagerDutyConfig, client: httpx.AsyncClient) -> None:
        self.config, self.client = config, client
        self.send_resolved = config.send_resolved

    async def notify(self, notification: dict) -> tuple[bool, str | None]:
        """POST the event; return (retryable, error)."""
        return await post_json(self.client, self.config.url,
                               json.dumps(event(notification, self.config)).encode(), {},
                               "pagerduty", self.config.timeout_s)
