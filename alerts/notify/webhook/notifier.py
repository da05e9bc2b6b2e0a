"""The webhook notifier: POST the v4 payload with Standard Webhooks headers.

Headers (https://www.standardwebhooks.com/): `webhook-id` (the notification id, the same on
every retry so receivers can de-duplicate), `webhook-timestamp` (unix seconds of this attempt)
and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

import httpx

from agentsla.alerts.notify.retry import post_json
from agentsla.alerts.notify.webhook.config import WebhookConfig


def sign(key: bytes, msg_id: str, timestamp: int, body: bytes) -> str:
    """Return the `v1,<signature>` header value for a message."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def verify(secret: str, headers, body: bytes, tolerance_s: float = 300.0,
           now: float | None = None) -> bool:
    """Check a delivery's signature and timestamp, as a receiver would."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    timestamp = int(headers["webhook-timestamp"])
    if abs((now if now is not None else time.time()) - timestamp) > tolerance_s:
        return False
    expected = sign(key, headers["webhook-id"], timestamp, body).split(",", 1)[1]
    given = [s.split(",", 1)[1] for s in headers["webhook-signature"].split() if s.startswith("v1,")]
    return any(hmac.compare_digest(expected, g) for g in given)


def payload(notification: dict, max_alerts: int) -> dict:
    """The Alertmanager webhook v4 payload, truncated to max_alerts (0: all)."""
    body = {k: v for k, v in notification.items() if k not in ("id", "integration", "createdAt")}
    if max_alerts and len(body["alerts"]) > max_alerts:
        body["truncatedAlerts"] = len(body["alerts"]) - max_alerts
        body["alerts"] = body["alerts"][:max_alerts]
    return body


class WebhookNotifier:
    """Send notifications to one webhook URL."""

    kind = "webhook"

    def __init__(self, config: WebhookConfig, client: httpx.AsyncClient,
                 clock=time.time) -> None:
        self.config, self.client, self.clock = config, client, clock
        self.send_resolved = config.send_resolved

    async def notify(self, notification: dict) -> tuple[bool, str | None]:
        """POST the payload; return (retryable, error)."""
        body = json.dumps(payload(notification, self.config.max_alerts),
                          separators=(",", ":")).encode()
        timestamp = int(self.clock())
        headers = {"webhook-id": notification["id"], "webhook-timestamp": str(timestamp)}
        if self.config.key is not None:
            headers["webhook-signature"] = sign(self.config.key, notification["id"], timestamp, body)
        return await post_json(self.client, self.config.url, body, headers, "webhook",
                               self.config.timeout_s)
