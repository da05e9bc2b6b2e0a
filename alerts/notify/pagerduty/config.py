"""Configuration of the PagerDuty integration (`pagerduty_configs`)."""

from __future__ import annotations

from dataclasses import dataclass

from agentsla.alerts.notify._config import Section

DEFAULT_URL = "https://events.pagerduty.com/v2/enqueue"
KEYS = {"routing_key", "url", "source", "send_resolved", "timeout"}


@dataclass(frozen=True)
class PagerDutyConfig:
    """The integration's routing key and the Events API endpoint."""

    routing_key: str
    url: str = DEFAULT_URL
    source: str = "agentsla"
    send_resolved: bool = True
    timeout_s: float = 10.0


def parse(raw, source: str, path: str) -> PagerDutyConfig:
    """Validate one `pagerduty_configs` item."""
    s = Section(raw, source, path, KEYS)
    return PagerDutyConfig(s.str("routing_key", required=True) or "", s.url("url", DEFAULT_URL),
                           s.str("source", "agentsla") or "agentsla",
                           s.bool("send_resolved", True), s.duration("timeout", 10.0))
