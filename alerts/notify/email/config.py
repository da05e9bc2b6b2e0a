"""Configuration of the email integration (`email_configs`)."""

from __future__ import annotations

from dataclasses import dataclass

from agentsla.alerts.notify._config import Section

KEYS = {"to", "from", "smarthost", "require_tls", "auth_username", "auth_password",
        "send_resolved", "timeout"}


@dataclass(frozen=True)
class EmailConfig:
    """Recipients, sender, the SMTP server (host:port) and its security."""

    to: tuple[str, ...]
    sender: str
    host: str
    port: int
    require_tls: bool = True
    auth_username: str | None = None
    auth_password: str | None = None
    send_resolved: bool = True
    timeout_s: float = 10.0


def parse(raw, source: str, path: str) -> EmailConfig:
    """Validate one `email_configs` item."""
    s = Section(raw, source, path, KEYS)
    smarthost = s.str("smarthost", required=True) or ""
    host, _, port = smarthost.rpartition(":")
    if not host or not port.isdigit():
        raise s.error("smarthost", f"{smarthost!r} must be host:port")
    return EmailConfig(tuple(s.list("to", required=True)), s.str("from", required=True) or "",
                       host, int(port), s.bool("require_tls", True), s.str("auth_username"),
                       s.str("auth_password"), s.bool("send_resolved", True),
                       s.duration("timeout", 10.0))
