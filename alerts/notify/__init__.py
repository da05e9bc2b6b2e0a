"""Notifications: the payload every integration formats from, and the Notifier interface.

A notification is a plain dict shaped like Alertmanager's webhook v4 payload (plus `id`,
`integration` and `createdAt`), so it can sit in the outbox as JSON and be sent again after a
restart exactly as it was decided.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Protocol

from agentsla.contract import FailingHop, hop_label

ZERO_TIME = "0001-01-01T00:00:00Z"
#: The alert's root-cause context a notification carries as data: the first failing hop
#: (FailingHop.to_json()), its share of the blamed tasks, example tasks and traces, and the
#: incident it belongs to (id, the dominant first failing hop over the incident, its share).
CONTEXT_KEYS = ("first_failing_hop", "first_failing_hop_share", "example_task_ids",
                "example_trace_ids", "incident")


class Notifier(Protocol):
    """An integration: formats a notification and sends it, nothing more.

    `notify` returns (retryable, error): error None means delivered; otherwise `retryable`
    tells the retry stage whether trying again can help. No notifier sleeps, retries or dedups.
    """

    kind: str
    send_resolved: bool

    async def notify(self, notification: dict) -> tuple[bool, str | None]:
        """Send one notification."""


def rfc3339(seconds: float | None) -> str:
    """Format unix seconds as RFC 3339 UTC (Alertmanager's zero time for None)."""
    if seconds is None:
        return ZERO_TIME
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def alert_payload(alert) -> dict:
    """Describe one alert as Alertmanager's webhook does (plus its value)."""
    resolved = alert.state.value == "resolved"
    return {"status": "resolved" if resolved else "firing", "labels": dict(alert.labels),
            "annotations": dict(alert.annotations),
            "startsAt": rfc3339(alert.fired_at or alert.active_at),
            "endsAt": rfc3339(alert.resolved_at) if resolved else ZERO_TIME,
            "generatorURL": alert.generator_url, "fingerprint": alert.fingerprint,
            "value": alert.value, "context": {k: alert.context.get(k) for k in CONTEXT_KEYS}}


def build_notification(receiver: str, integration: str, group_key: str,
                       group_labels: dict[str, str], alerts: Iterable, now: float,
                       external_url: str = "") -> dict:
    """Build the notification for a group's alerts (firing first, then resolved)."""
    payloads = sorted((alert_payload(a) for a in alerts),
                      key=lambda p: (p["status"] != "firing", -(p["value"] or 0), p["fingerprint"]))
    firing = [p for p in payloads if p["status"] == "firing"]
    return {"version": "4", "receiver": receiver, "integration": integration,
            "status": "firing" if firing else "resolved", "groupKey": group_key,
            "groupLabels": dict(group_labels), "commonLabels": _common(p["labels"] for p in payloads),
            "commonAnnotations": _common(p["annotations"] for p in payloads),
            "externalURL": external_url, "truncatedAlerts": 0, "alerts": payloads,
            "createdAt": rfc3339(now)}


def _common(maps: Iterable[dict[str, Any]]) -> dict[str, Any]:
    maps = list(maps)
    if not maps:
        return {}
    return {k: v for k, v in maps[0].items() if all(m.get(k) == v for m in maps[1:])}


def counts(notification: dict) -> tuple[int, int]:
    """Firing and resolved alert counts of a notification."""
    firing = sum(1 for a in notification["alerts"] if a["status"] == "firing")
    return firing, len(notification["alerts"]) - firing


def title(notification: dict) -> str:
    """A one-line title: `[FIRING:2] ToolErrorRateHigh P1 (hop_name=search)`."""
    firing, resolved = counts(notification)
    status = f"FIRING:{firing}" if firing else f"RESOLVED:{resolved}"
    common = notification["commonLabels"]
    name = common.get("alertname") or notification["groupLabels"].get("alertname") or "alerts"
    severity = common.get("severity", "")
    scope = ", ".join(f"{k}={v}" for k, v in notification["groupLabels"].items()
                      if k not in ("alertname", "severity"))
    return f"[{status}] {name}" + (f" {severity}" if severity else "") + (f" ({scope})" if scope else "")


def alert_line(alert: dict) -> str:
    """One readable line per alert: scope, value, first failing hop, example traces."""
    skip = {"alertname", "severity", "scope", "slo_window", "burn_factor"}
    scope = ", ".join(f"{k}={v}" for k, v in alert["labels"].items() if k not in skip) or "all"
    ann = alert["annotations"]
    value = alert.get("value")
    text = f"{scope}: {ann.get('summary') or (f'value {value:.4g}' if value is not None else '')}"
    text += f" | first failing hop: {hop_text(alert)}"
    if ann.get("example_trace_ids"):
        text += f" | traces: {ann['example_trace_ids']}"
    return text


def cut(text: str, limit: int) -> str:
    """Shorten a text to `limit` characters, ending in an ellipsis when cut."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def take_fitting(lines: list[str], candidates: Iterable[str], footer: list[str],
                 max_shown: int, fits: Callable[[list[str]], bool]) -> int:
    """Append candidate lines (top offenders first) while fewer than `max_shown` and the
    message `lines + footer` still fits; return how many were taken."""
    taken = 0
    for line in candidates:
        if taken >= max_shown or not fits(lines + [line] + footer):
            break
        lines.append(line)
        taken += 1
    return taken


def hop_text(alert: dict) -> str:
    """Display an alert's first failing hop with its share (`tool db (timeout), 53% of blamed
    tasks`), and its incident's dominant one over the whole incident where that differs."""
    context = alert.get("context") or {}
    hop = FailingHop.from_json(context.get("first_failing_hop"))
    if hop is None:
        # a notification queued before the hop was structured carries only the annotation
        text = alert["annotations"].get("first_failing_hop") or "unknown"
    else:
        text = hop_label(hop, share=context.get("first_failing_hop_share"))
    incident = context.get("incident") or {}
    headline = FailingHop.from_json(incident.get("first_failing_hop"))
    if headline is not None and headline != hop:
        text += (f"; incident {incident.get('id')}: "
                 + hop_label(headline, share=incident.get("first_failing_hop_share")))
    return text
