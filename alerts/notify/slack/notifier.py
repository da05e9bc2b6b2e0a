"""The Slack notifier: one readable message per notification.

Slack truncates `text` beyond 40,000 characters and renders a section's text up to 3,000; the
message keeps under MAX_TEXT by showing the top offenders (highest value first) and "N more".
"""

from __future__ import annotations

import json

import httpx

from agentsla.alerts.notify import alert_line, cut, take_fitting, title
from agentsla.alerts.notify.retry import post_json
from agentsla.alerts.notify.slack.config import SlackConfig

MAX_TEXT = 3000
MAX_LINE = 400


def render(notification: dict, max_shown: int) -> str:
    """The message text: title, top offenders, the rest counted, a link."""
    firing = [a for a in notification["alerts"] if a["status"] == "firing"]
    resolved = [a for a in notification["alerts"] if a["status"] == "resolved"]
    lines = [f"*{title(notification)}*"]
    footer = []
    link = next((a["generatorURL"] for a in notification["alerts"] if a["generatorURL"]), "")
    if link:
        footer.append(f"<{link}|Open in agentsla>")
    shown = 0
    for label, alerts in (("Firing", firing), ("Resolved", resolved)):
        if not alerts:
            continue
        lines.append(f"{label}:")
        shown += take_fitting(lines, ("• " + cut(alert_line(a), MAX_LINE) for a in alerts),
                              footer, max_shown - shown,
                              lambda text: len("\n".join(text)) <= MAX_TEXT - 40)
    more = len(notification["alerts"]) - shown
    if more > 0:
        lines.append(f"…and {more} more")
    return "\n".join(lines + footer)


class SlackNotifier:
    """Post notifications to a Slack incoming webhook."""

    kind = "slack"

    def __init__(self, config: SlackConfig, client: httpx.AsyncClient) -> None:
        self.config, self.client = config, client
        self.send_resolved = config.send_resolved

    async def notify(self, notification: dict) -> tuple[bool, str | None]:
        """POST the message; return (retryable, error)."""
        message = {"text": render(notification, self.config.max_alerts_shown)}
        if self.config.channel:
            message["channel"] = self.config.channel
        if self.config.username:
            message["username"] = self.config.username
        return await post_json(self.client, self.config.api_url, json.dumps(message).encode(),
                               {}, "slack", self.config.timeout_s)
