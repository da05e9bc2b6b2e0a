"""Configuration of the digest integration (`digest_configs`).

A digest formats everything in a notification as one Markdown summary. Put it on a route with
`group_by: [severity]` and `group_wait`/`group_interval`/`repeat_interval` of the digest period
(e.g. 24h): the route's timers then decide when a digest goes out (see docs/alerts.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from agentsla.alerts.notify._config import Section
from agentsla.alerts.notify.email.config import EmailConfig, parse as parse_email

KEYS = {"path", "email", "send_resolved"}


@dataclass(frozen=True)
class DigestConfig:
    """Where digests go: appended to a file, emailed, or both."""

    path: str | None = None
    email: EmailConfig | None = None
    send_resolved: bool = True


def parse(raw, source: str, path: str) -> DigestConfig:
    """Validate one `digest_configs` item: at least one of path and email."""
    s = Section(raw, source, path, KEYS)
    email = parse_email(raw["email"], source, f"{path}.email") if raw.get("email") else None
    if not s.str("path") and email is None:
        raise s.error("path", "a digest needs a path, an email, or both")
    return DigestConfig(s.str("path"), email, s.bool("send_resolved", True))
