"""Configuration of the generic webhook integration (`webhook_configs`)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from agentsla.alerts.notify._config import Section

KEYS = {"url", "secret", "max_alerts", "send_resolved", "timeout"}


@dataclass(frozen=True)
class WebhookConfig:
    """Where to POST, the signing secret (`whsec_<base64>`), and payload limits."""

    url: str
    secret: str | None = None
    max_alerts: int = 0  # 0: all
    send_resolved: bool = True
    timeout_s: float = 10.0

    @property
    def key(self) -> bytes | None:
        """The HMAC key: the base64 part of the secret, decoded."""
        if not self.secret:
            return None
        return base64.b64decode(self.secret.removeprefix("whsec_"))


def parse(raw, source: str, path: str) -> WebhookConfig:
    """Validate one `webhook_configs` item."""
    s = Section(raw, source, path, KEYS)
    secret = s.str("secret")
    if secret:
        if not secret.startswith("whsec_"):
            raise s.error("secret", "must start with whsec_ (Standard Webhooks), then base64")
        try:
            base64.b64decode(secret.removeprefix("whsec_"), validate=True)
        except (binascii.Error, ValueError):
            raise s.error("secret", "the part after whsec_ is not valid base64") from None
    return WebhookConfig(s.url("url"), secret, s.int("max_alerts", 0),
                         s.bool("send_resolved", True), s.duration("timeout", 10.0))
