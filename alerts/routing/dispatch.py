"""The dispatcher: route alerts into aggregation groups and flush them on their timers.

Shaped like Alertmanager's dispatch/dispatch.go, but driven by `tick(now)` instead of timers,
so tests move time by hand. A group's first flush waits `group_wait` after it is created;
later flushes come every `group_interval`. A flush runs the notify pipeline for each
integration of the route's receiver, then drops the resolved alerts it covered.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field

from agentsla.alerts.rules.evaluator import Alert, State
from agentsla.alerts.notify.pipeline import Context, MultiStage
from agentsla.alerts.notify.receivers import Integration
from agentsla.alerts.routing.route import Route


@dataclass
class AggrGroup:
    """Alerts of one route sharing the route's group_by labels."""

    route: Route
    labels: dict[str, str]
    key: str
    created_at: float
    next_flush_at: float
    alerts: dict[str, Alert] = field(default_factory=dict)


def group_key(route: Route, labels: dict[str, str]) -> str:
    """The group's identity: route key and group labels (as Alertmanager spells it)."""
    body = ",".join(f"{k}={json.dumps(v)}" for k, v in sorted(labels.items()))
    return f"{route.key}:{{{body}}}"


class Dispatcher:
    """Groups alerts per route and flushes due groups through the pipeline."""

    def __init__(self, route: Route, integrations: dict[str, list[Integration]],
                 pipeline: MultiStage, external_url: str = "") -> None:
        self.route = route
        self.integrations = integrations
        self.pipeline = pipeline
        self.external_url = external_url
        self.groups: dict[str, AggrGroup] = {}
        self._done_resolved: dict[str, float] = {}

    def ingest(self, alerts: list[Alert], now: float) -> None:
        """Put firing and resolved alerts into their groups (pending alerts are not sent)."""
        present = {a.fingerprint for a in alerts}
        self._done_resolved = {k: v for k, v in self._done_resolved.items() if k in present}
        for alert in alerts:
            if alert.state == State.FIRING:
                self._done_resolved.pop(alert.fingerprint, None)
            elif alert.state == State.RESOLVED:
                if self._done_resolved.get(alert.fingerprint) == alert.resolved_at:
                    continue  # this resolution was already flushed
            else:
                continue
            for route in self.route.match(alert.labels):
                self._insert(route, alert, now)

    def _insert(self, route: Route, alert: Alert, now: float) -> None:
        labels = route.group_labels(alert.labels)
        key = group_key(route, labels)
        group = self.groups.get(key)
        if group is None:
            # A resolved alert may open a group (e.g. after a restart): the dedup stage then
            # tells only the receivers the nflog says were told it fired.
            group = AggrGroup(route, labels, key, now, now + route.group_wait_s)
            self.groups[key] = group
        group.alerts[alert.fingerprint] = copy.deepcopy(alert)

    def tick(self, now: float) -> int:
        """Flush every due group; return how many groups were flushed."""
        flushed = 0
        for key, group in list(self.groups.items()):
            if now < group.next_flush_at:
                continue
            self._flush(group, now)
            flushed += 1
            group.next_flush_at = now + group.route.group_interval_s
            if not group.alerts:
                del self.groups[key]
        return flushed

    def _flush(self, group: AggrGroup, now: float) -> None:
        alerts = sorted(group.alerts.values(), key=lambda a: a.fingerprint)
        for integration in self.integrations.get(group.route.receiver, []):
            ctx = Context(now, integration, group.key, group.labels,
                          group.route.repeat_interval_s, self.external_url)
            self.pipeline.exec(ctx, list(alerts))
        for alert in alerts:
            if alert.state == State.RESOLVED:
                del group.alerts[alert.fingerprint]
                self._done_resolved[alert.fingerprint] = alert.resolved_at or now

    def describe(self) -> list[dict]:
        """The groups and their alerts, for the API."""
        return [{"group_key": g.key, "receiver": g.route.receiver, "labels": g.labels,
                 "next_flush_at": g.next_flush_at, "alerts": sorted(g.alerts)}
                for g in self.groups.values()]
