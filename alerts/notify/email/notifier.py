"""The email notifier: smtplib in a worker thread, SMTP replies classified like HTTP.

4xx SMTP replies and connection problems are retryable; 5xx replies are not (RFC 5321 §4.2.1).
"""

from __future__ import annotations

import asyncio
import smtplib
from email.message import EmailMessage

from agentsla.alerts.notify import alert_line, title
from agentsla.alerts.notify.email.config import EmailConfig


def message(notification: dict, config: EmailConfig) -> EmailMessage:
    """Build the email: subject is the title, body one paragraph per alert."""
    msg = EmailMessage()
    msg["Subject"] = title(notification)
    msg["From"] = config.sender
    msg["To"] = ", ".join(config.to)
    msg["Message-ID"] = f"<{notification['id']}@agentsla>"  # stable: a retry is the same mail
    lines = []
    for alert in notification["alerts"]:
        lines.append(f"[{alert['status'].upper()}] {alert_line(alert)}")
        ann = alert["annotations"]
        if ann.get("description"):
            lines.append(f"  {ann['description']}")
        if alert["generatorURL"]:
            lines.append(f"  {alert['generatorURL']}")
        lines.append("")
    msg.set_content("\n".join(lines) or "(no alerts)")
    return msg


def send(msg: EmailMessage, config: EmailConfig) -> tuple[bool, str | None]:
    """Send synchronously; return (retryable, error)."""
    try:
        with smtplib.SMTP(config.host, config.port, timeout=config.timeout_s) as smtp:
            if config.require_tls:
                smtp.starttls()
            if config.auth_username:
                smtp.login(config.auth_username, config.auth_password or "")
            smtp.send_message(msg)
    except smtplib.SMTPResponseException as exc:
        return 400 <= exc.smtp_code < 500, f"SMTP server answered {exc.smtp_code}: {exc.smtp_error!r}"
    except smtplib.SMTPRecipientsRefused as exc:
        codes = [code for code, _ in exc.recipients.values()]
        return all(400 <= c < 500 for c in codes), f"SMTP recipients refused: {exc.recipients}"
    except (smtplib.SMTPException, OSError) as exc:
        return True, f"cannot reach SMTP server: {type(exc).__name__}: {exc}"
    return False, None


class EmailNotifier:
    """Send notifications by SMTP."""

    kind = "email"

    def __init__(self, config: EmailConfig) -> None:
        self.config = config
        self.send_resolved = config.send_resolved

    async def notify(self, notification: dict) -> tuple[bool, str | None]:
        """Send the email in a worker thread; return (retryable, error)."""
        return await asyncio.to_thread(send, message(notification, self.config), self.config)
