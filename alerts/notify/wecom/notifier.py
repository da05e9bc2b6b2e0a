"""The WeCom notifier: a group robot's markdown message.

Format (developer.work.weixin.qq.com, group robot): POST `{"msgtype": "markdown", "markdown":
{"content"}}` with content at most 4096 bytes (UTF-8); the answer is `{"errcode": 0}`, errcode
45009 when the robot is over its frequency limit (20 messages a minute). The webhook key is in
the URL; group robots do not sign.
"""

from __future__ import annotations

import httpx

from agentsla.alerts.notify._robot import RobotConfig, post_robot, render_markdown

MAX_BYTES = 4096
TOO_FREQUENT = frozenset({45009})


class WeComNotifier:
    """Post notifications to a WeCom group robot."""

    kind = "wecom"

    def __init__(self, config: RobotConfig, client: httpx.AsyncClient) -> None:
        self.config, self.client = config, client
        self.send_resolved = config.send_resolved

    async def notify(self, notification: dict) -> tuple[bool, str | None]:
        """POST the markdown message; return (retryable, error)."""
        _, text = render_markdown(notification, self.config.max_alerts_shown, MAX_BYTES)
        message = {"msgtype": "markdown", "markdown": {"content": text}}
        return await post_robot(self.client, self.config.url, message, "wecom",
                                self.config.timeout_s, "errcode", TOO_FREQUENT)
