"""The digest notifier: render a Markdown summary and append it to a file and/or email it."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from email.message import EmailMessage
from pathlib import Path

from agentsla.alerts.notify import alert_line, counts
from agentsla.alerts.notify.digest.config import DigestConfig
from agentsla.alerts.notify.email.notifier import send as send_email


def render(notification: dict) -> str:
    """The digest as Markdown: per alert name, firing and resolved lines."""
    firing, resolved = counts(notification)
    lines = [f"## agentsla digest {notification['createdAt']}: {firing} firing, {resolved} resolved", ""]
    by_name: dict[str, list[dict]] = defaultdict(list)
    for alert in notification["alerts"]:
        by_name[alert["labels"].get("alertname", "?")].append(alert)
    for name in sorted(by_name):
        lines.append(f"### {name}")
        for alert in by_name[name]:
            lines.append(f"- [{alert['status']}] {alert_line(alert)}")
        lines.append("")
    return "\n".join(lines) + "\n"


def _write(path: str, text: str) -> tuple[bool, str | None]:
    try:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        return True, f"cannot write digest {path}: {exc.strerror}"
    return False, None


class DigestNotifier:
    """Deliver digests."""

    kind = "digest"

    def __init__(self, config: DigestConfig) -> None:
        self.config = config
        self.send_resolved = config.send_resolved

    async def notify(self, notification: dict) -> tuple[bool, str | None]:
        """Append and/or email the digest; return (retryable, error)."""
        text = render(notification)
        if self.config.email is not None:
            msg = EmailMessage()
            msg["Subject"] = text.splitlines()[0].lstrip("# ")
            msg["From"] = self.config.email.sender
            msg["To"] = ", ".join(self.config.email.to)
            msg["Message-ID"] = f"<{notification['id']}@agentsla>"
            msg.set_content(text)
            retryable, error = await asyncio.to_thread(send_email, msg, self.config.email)
            if error:
                return retryable, error
        if self.config.path:
            return await asyncio.to_thread(_write, self.config.path, text)
        return False, None
