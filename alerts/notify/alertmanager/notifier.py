"""Push alerts to Alertmanager the way Prometheus does (notifier/notifier.go).

Alertmanager does its own routing, grouping, silencing and deduplication, so agentsla sends it
the whole state, not routed notifications: every firing alert with `endsAt` a few resend
periods ahead (Alertmanager resolves it by itself if agentsla goes away), and every resolved
alert still retained, with its real `endsAt`. State changes are sent at once; otherwise the
state is re-sent every `resend_delay`. Sending is idempotent, so restarts need no log.
"""

from __future__ import annotations

import json

import httpx

from agentsla.alerts.notify import rfc3339
from agentsla.alerts.notify.alertmanager.config import AlertmanagerConfig
from agentsla.alerts.notify.retry import post_json


def alert_body(alert, now: float, valid_for_s: float) -> dict:
    """One alert in Alertmanager's postableAlert shape."""
    resolved = alert.state.value == "resolved"
    body = {"labels": dict(alert.labels), "annotations": dict(alert.annotations),
            "startsAt": rfc3339(alert.fired_at or alert.active_at),
            "endsAt": rfc3339(alert.resolved_at if resolved else now + valid_for_s)}
    if alert.generator_url:
        body["generatorURL"] = alert.generator_url
    return body


class AlertmanagerPusher:
    """Keep Alertmanagers in step with agentsla's firing and resolved alerts."""

    def __init__(self, configs: list[AlertmanagerConfig], client: httpx.AsyncClient,
                 resend_delay_s: float = 60.0, eval_interval_s: float = 10.0) -> None:
        self.configs, self.client = configs, client
        self.resend_delay_s = resend_delay_s
        # Prometheus: endsAt = now + 4 x max(resend delay, evaluation interval)
        self.valid_for_s = 4 * max(resend_delay_s, eval_interval_s)
        self._last_sent: dict[str, float] = {}
        self._last_state: dict[str, frozenset] = {}
        self.errors: dict[str, str | None] = {}

    async def push(self, alerts: list, now: float) -> None:
        """Send the state to each Alertmanager that is due or whose view is stale."""
        sendable = [a for a in alerts if a.state.value in ("firing", "resolved")]
        state = frozenset((a.fingerprint, a.state.value) for a in sendable)
        for config in self.configs:
            changed = self._last_state.get(config.url) != state
            due = now - self._last_sent.get(config.url, float("-inf")) >= self.resend_delay_s
            if not sendable or not (changed or due):
                continue
            body = json.dumps([alert_body(a, now, self.valid_for_s) for a in sendable]).encode()
            _, error = await post_json(self.client, config.url + "/api/v2/alerts", body, {},
                                       "alertmanager", config.timeout_s)
            self.errors[config.url] = error
            if error is None:  # on failure the next tick tries again: the send is idempotent
                self._last_sent[config.url], self._last_state[config.url] = now, state
