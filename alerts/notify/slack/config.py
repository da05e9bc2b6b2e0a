"""Configuration of the Slack integration (`slack_configs`)."""

from __future__ import annotations

from dataclasses import dataclass

from agentsla.alerts.notify._config import Section

KEYS = {"api_url", "channel", "username", "max_alerts_shown", "send_resolved", "timeout"}


@dataclass(frozen=True)
class SlackConfig:
    """The incoming-webhook URL and how much to show."""

    api_url: str
    channel: str | None = None
    username: str | None = None
    max_alerts_shown: int = 5
    send_resolved: bool = True
    timeout_s: float = 10.0


def parse(raw, source: str, path: str) -> SlackConfig:
    """Validate one `slack_configs` item."""
    s = Section(raw, source, path, KEYS)
    shown = s.int("max_alerts_shown", 5)
    if shown < 1:
        raise s.error("max_alerts_shown", "must be at least 1")
    return SlackConfig(s.url("api_url"), s.str("channel"), s.str("username"), shown,
                       s.bool("send_resolved", True), s.duration("timeout", 10.0))
