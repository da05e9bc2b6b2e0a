"""Email through a real SMTP server (aiosmtpd) on a loopback port, plus the P2 digest."""

from __future__ import annotations

import asyncio

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Message
from serverproc import free_port
from notifykit import alert, notification

from agentsla.alerts.notify.digest.config import DigestConfig
from agentsla.alerts.notify.digest.notifier import DigestNotifier
from agentsla.alerts.notify.email.config import EmailConfig
from agentsla.alerts.notify.email.notifier import EmailNotifier


class Inbox(Message):
    def __init__(self):
        super().__init__()
        self.messages = []

    def handle_message(self, message):
        self.messages.append(message)


@pytest.fixture
def smtp():
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    yield inbox, controller.port
    controller.stop()


def _config(port, **kw):
    return EmailConfig(("oncall@example.com",), "agentsla@example.com", "127.0.0.1", port,
                       require_tls=False, **kw)


def test_email_arrives_with_hop_and_traces(smtp):
    inbox, port = smtp
    result = asyncio.run(EmailNotifier(_config(port)).notify(notification(nid="n42")))
    assert result == (False, None)
    [msg] = inbox.messages
    assert msg["Subject"] == '[FIRING:1] ToolErrorRateHigh P1'
    assert msg["To"] == "oncall@example.com" and msg["Message-ID"] == "<n42@agentsla>"
    body = msg.get_payload(decode=True).decode()
    assert "first failing hop: tool search (timeout)" in body
    assert "4bf92f3577b34da6a3ce929d0e0e4736" in body


def test_unreachable_smtp_is_retryable():
    retryable, error = asyncio.run(EmailNotifier(_config(free_port())).notify(notification()))
    assert retryable and "cannot reach SMTP" in error


def test_digest_to_file_and_email(tmp_path, smtp):
    inbox, port = smtp
    path = tmp_path / "digests" / "p2.md"
    notifier = DigestNotifier(DigestConfig(str(path), _config(port)))
    n = notification(alert("TokenQuotaPredicted", hop="gpt", severity="P2"),
                     alert("TokenQuotaPredicted", hop="claude", severity="P2"))
    assert asyncio.run(notifier.notify(n)) == (False, None)
    text = path.read_text()
    assert text.startswith("## agentsla digest") and "2 firing, 0 resolved" in text
    assert text.count("- [firing]") == 2 and "### TokenQuotaPredicted" in text
    assert inbox.messages[0]["Subject"].startswith("agentsla digest")
