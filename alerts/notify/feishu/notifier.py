"""The Feishu / Lark notifier: a custom bot's interactive card, signed when a secret is set.

Format (open.feishu.cn, custom bot): POST `{"msg_type": "interactive", "card": {...}}` with a
header and a `lark_md` block; the request body may not exceed 20 KB. The answer is `{"code": 0}`,
code 9499 or 11232 when the bot is rate limited (100 messages a minute, 5 a second). Signing:
`timestamp` (seconds) + "\\n" + secret is the HMAC-SHA256 *key* over an empty message; the
base64 digest goes in the body as `sign`, beside `timestamp`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time

import httpx

from agentsla.alerts.notify import counts
from agentsla.alerts.notify._robot import RobotConfig, post_robot, render_markdown

#: Kept under Feishu's 20 KB request body, with room for the card around the text.
MAX_BYTES = 18_000
TOO_FREQUENT = frozenset({9499, 11232})


def sign(secret: str, timestamp_s: int) -> str:
    """Return the body's `sign` for a timestamp."""
    key = f"{timestamp_s}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()


def card(notification: dict, max_shown: int) -> dict:
    """The interactive card: a red (firing) or green (resolved) header and the markdown."""
    title, text = render_markdown(notification, max_shown, MAX_BYTES)
    firing, _ = counts(notification)
    return {"config": {"wide_screen_mode": True},
            "header": {"title": {"tag": "plain_text", "content": title},
                       "template": "red" if firing else "green"},
            "elements": [{"tag": "div", "text": {"tag": "lark_md", "content": text}}]}


class FeishuNotifier:
    """Post notifications to a Feishu / Lark custom bot."""

    kind = "feishu"

    def __init__(self, config: RobotConfig, client: httpx.AsyncClient, clock=time.time) -> None:
        self.config, self.client, self.clock = config, client, clock
        self.send_resolved = config.send_resolved

    async def notify(self, notification: dict) -> tuple[bool, str | None]:
        """POST the card; return (retryable, error)."""
        message: dict = {"msg_type": "interactive",
                         "card": card(notification, self.config.max_alerts_shown)}
        if self.config.secret:
            timestamp = int(self.clock())
            message.update(timestamp=str(timestamp), sign=sign(self.config.secret, timestamp))
        return await post_robot(self.client, self.config.url, message, "feishu",
                                self.config.timeout_s, "code", TOO_FREQUENT)
