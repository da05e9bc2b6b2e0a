"""Configuration of Alertmanager push (`alerts.alertmanagers`)."""

from __future__ import annotations

from dataclasses import dataclass

from agentsla.alerts.notify._config import Section

KEYS = {"url", "timeout"}


@dataclass(frozen=True)
class AlertmanagerConfig:
    """One Alertmanager's base URL (e.g. http://127.0.0.1:9093)."""

    url: str
    timeout_s: float = 10.0


def parse(raw, source: str, path: str) -> AlertmanagerConfig:
    """Validate one `alertmanagers` item."""
    s = Section(raw, source, path, KEYS)
    return AlertmanagerConfig(s.url("url").rstrip("/"), s.duration("timeout", 10.0))
