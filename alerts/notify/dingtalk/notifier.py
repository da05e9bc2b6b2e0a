"""The DingTalk notifier: a custom robot's markdown message, signed when a secret is set.

Format (open.dingtalk.com, custom robot): POST `{"msgtype": "markdown", "markdown": {"title",
"text"}}`; the answer is `{"errcode": 0, "errmsg": "ok"}`, errcode 130101 when the robot sends
too fast (20 messages a minute). Signing: `timestamp` (ms) + "\\n" + secret, HMAC-SHA256 keyed
with the secret, base64, URL-encoded, sent as the query parameters `timestamp` and `sign`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from urllib.parse import quote_plus

import httpx

from agentsla.alerts.notify._robot import RobotConfig, post_robot, render_markdown

#: Kept under DingTalk's message size limit (20,000 bytes), with room for the JSON around it.
MAX_BYTES = 18_000
TOO_FREQUENT = frozenset({130101})


def sign(secret: str, timestamp_ms: int) -> str:
    """Return the URL-encoded `sign` query value for a timestamp."""
    digest = hmac.new(secret.encode(), f"{timestamp_ms}\n{secret}".encode(), hashlib.sha256).digest()
    return quote_plus(base64.b64encode(digest).decode())


def signed_url(url: str, secret: str | None, timestamp_ms: int) -> str:
    """The webhook URL with `timestamp` and `sign` appended when the robot signs."""
    if not secret:
        return url
    joiner = "&" if "?" in url else "?"
    return f"{url}{joiner}timestamp={timestamp_ms}&sign={sign(secret, timestamp_ms)}"


class DingTalkNotifier:
    """Post notifications to a DingTalk custom robot."""

    kind = "dingtalk"

    def __init__(self, config: RobotConfig, client: httpx.AsyncClient, clock=time.time) -> None:
        self.config, self.client, self.clock = config, client, clock
        self.send_resolved = config.send_resolved

    async def notify(self, notification: dict) -> tuple[bool, str | None]:
        """POST the markdown message; return (retryable, error)."""
        title, text = render_markdown(notification, self.config.max_alerts_shown, MAX_BYTES)
        message = {"msgtype": "markdown", "markdown": {"title": title, "text": text}}
        url = signed_url(self.config.url, self.config.secret, int(self.clock() * 1000))
        return await post_robot(self.client, url, message, "dingtalk", self.config.timeout_s,
                                "errcode", TOO_FREQUENT)
