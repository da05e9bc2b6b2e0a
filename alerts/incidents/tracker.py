"""Incidents: group firing P0/P1 alerts into incidents and follow them to resolution.

IncidentTracker.observe(now, alerts, query) runs after every evaluation round of the alert
service. A P0 or P1 alert that fires opens an incident unless it is related to an open one:
related means sharing a scope label value (task_type, tenant_id, hop_name, model, tool,
provider, service_name, agent) or the same first failing hop, while the incident is open (so
their times overlap). Related alerts of any tier join. An incident resolves once all its alerts
resolved and `quiet_period` passed without one firing again; its `resolved_at` is when the last
alert resolved (the end of the impact), `closed_at` when the quiet period ran out.

Lifecycle: started (the first failing span in the first alert's scope, looked for in the rule's
window before the alert went pending), detected (first alert fired), acknowledged and mitigated
(API/CLI), resolved. The timeline sources (snapshots, Pareto, findings, notifications, silences)
are in alerts/incidents/signals.py; `enrich()` collects them in the alert service's
enrichment worker (alerts/enrichment.py), never inside an evaluation round.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from agentsla.alerts.rules.evaluator import Alert, State
from agentsla.alerts.incidents.store import Incident, IncidentAlert, IncidentStore
from agentsla.alerts.rules.samples import NS
from agentsla.contract import FailingHop, hop_label
from agentsla.errors import PermanentError

log = logging.getLogger("agentsla.alerts.incidents.tracker")

#: Labels whose equal values make two alerts related.
GROUP_LABELS = ("task_type", "tenant_id", "service_name", "agent", "hop_name", "model", "tool",
                "provider")
TIERS = ("P0", "P1", "P2")
NOTE_KINDS = ("note", "change", "mitigated")
DEFAULT_WINDOW_S = 600.0


@dataclass(frozen=True)
class IncidentSettings:
    """The `alerts.incidents` section: which tiers open incidents, quiet period, snapshot pace."""

    enabled: bool = True
    severities: tuple[str, ...] = ("P0", "P1")
    quiet_period_s: float = 600.0
    snapshot_interval_s: float = 60.0
    snapshot_window_s: float = 300.0


def related(a: Mapping[str, str], b: Mapping[str, str], ffh_a: FailingHop | None,
            ffh_b: FailingHop | None) -> bool:
    """Tell whether two alerts share a scope label value or their first failing hop."""
    if any(a.get(k) and a.get(k) == b.get(k) for k in GROUP_LABELS):
        return True
    # The hop, not the reason: a tool that times out, then fails fast on its open breaker,
    # is one cause.
    return ffh_a is not None and ffh_a.same_hop(ffh_b)


def ffh_of(alert: Alert) -> FailingHop | None:
    """The first failing hop the alert's root-cause context named, if any."""
    return FailingHop.from_json(alert.context.get("first_failing_hop"))


def _locked(method):
    """Run a method holding the tracker's lock (people edit incidents from API threads)."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with self.lock:
            return method(self, *args, **kwargs)
    return run


class IncidentTracker:
    """Open, join, resolve incidents from the alerts of each round; record ack and notes."""

    def __init__(self, store: IncidentStore, settings: IncidentSettings, config=None,
                 rule_windows: Mapping[str, float] | None = None, inhibitor=None) -> None:
        from agentsla.alerts.incidents.signals import Signals

        self.store, self.settings, self.config = store, settings, config
        self.rule_windows = dict(rule_windows or {})
        self.inhibitor = inhibitor  # a Muter: an inhibited alert is not a detection of its own
        self.lock = threading.RLock()  # the round, API edits and enrichment's saves take turns
        self.signals = Signals(store, settings, config, self.lock)

    # --- the round -------------------------------------------------------------------------

    def observe(self, now: float, alerts: Iterable[Alert], query: Any = None) -> None:
        """Fold one evaluation round into the incidents (query: a MetricSource, or None)."""
        if not self.settings.enabled:
            return
        try:
            with self.lock:
                self._observe(now, list(alerts), query)
        except Exception:  # noqa: BLE001 - incidents must not stop alerting; next round retries
            log.exception("incident tracking failed; retrying next round")

    def _observe(self, now: float, alerts: list[Alert], query: Any) -> None:
        cur = getattr(query, "store", None)
        firing = sorted((a for a in alerts if a.state == State.FIRING
                         and not (self.inhibitor and self.inhibitor.mutes(a.labels, now))),
                        key=lambda a: (a.fired_at or now, a.fingerprint))
        for alert in firing:
            self._place(alert, now, cur)
        by_fp = {a.fingerprint: a for a in alerts}
        for incident in self.store.open():
            self._follow(incident, by_fp, now)
        self._headlines(firing)

    def _headlines(self, firing: list[Alert]) -> None:
        """Give each firing alert of an open incident the incident's headline (the dominant first
        failing hop over the incident, with its share), so its notifications say it too."""
        members = {ia.fingerprint: inc for inc in self.store.open()
                   for ia in self.store.alerts(inc.id)}
        for alert in firing:
            incident = members.get(alert.fingerprint)
            if incident is None:
                continue
            hop, share = incident.first_failing_hop, incident.first_failing_hop_share
            alert.context["incident"] = {"id": incident.id, "first_failing_hop_share": share,
                                         "first_failing_hop": hop and hop.to_json()}

    def enrich(self, now: float, cur: Any = None, deadline: float | None = None) -> None:
        """Add the timeline signals (the Enricher's worker thread calls this, never a round)."""
        if not self.settings.enabled:
            return
        try:
            self.signals.collect(now, cur, deadline)
        except Exception:  # noqa: BLE001 - enrichment is best effort; the next pass retries
            log.exception("incident enrichment failed; retrying next pass")

    def _place(self, alert: Alert, now: float, cur) -> None:
        open_ = self.store.open()
        members = {ia.fingerprint: (inc, ia) for inc in open_ for ia in self.store.alerts(inc.id)}
        if alert.fingerprint in members:
            incident, member = members[alert.fingerprint]
            if member.resolved_at is not None:  # fired again while the incident was quiet
                self._join(incident, alert, now, again=True)
            return
        ffh = ffh_of(alert)
        incident = next((inc for inc, ia in reversed(list(members.values()))
                         if related(ia.labels, alert.labels, ia.first_failing_hop, ffh)), None)
        if incident is None:
            if _tier(alert) not in self.settings.severities:
                return
            incident = self._open(alert, now, cur)
        self._join(incident, alert, now)

    def _open(self, alert: Alert, now: float, cur) -> Incident:
        detected = alert.fired_at or now
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(detected))
        labels = {k: alert.labels[k] for k in GROUP_LABELS if alert.labels.get(k)}
        summary = alert.annotations.get("summary")
        scope = ", ".join(f"{k}={v}" for k, v in labels.items())
        title = f"{alert.name}: {summary}" if summary else f"{alert.name} {{{scope}}}"
        incident = Incident(f"INC-{stamp}-{alert.fingerprint[:4]}", title, "open", _tier(alert),
                            labels, ffh_of(alert), self._onset(alert, detected, cur), detected,
                            data={"scope_labels": labels}, updated_at=now,
                            first_failing_hop_share=alert.context.get("first_failing_hop_share"))
        self.store.save(incident)
        self.store.add_entry(incident.id, detected, "opened", f"Incident opened: {title}",
                             f"{_tier(alert)} alert {alert.name} fired; first failing hop: "
                             f"{hop_label(incident.first_failing_hop)}.",
                             severity="critical", source="tracker", labels=labels,
                             dedup=f"opened:{incident.id}")
        if incident.started_at is not None and incident.started_at < detected:
            self.store.add_entry(incident.id, incident.started_at, "impact_started",
                                 "First failing span of the impact",
                                 "The earliest failing span in the alert's scope before detection.",
                                 severity="warning", source="spans", labels=labels,
                                 dedup=f"started:{incident.id}")
        log.warning("incident %s opened: %s", incident.id, title)
        return incident

    def _onset(self, alert: Alert, detected: float, cur) -> float | None:
        if cur is None:
            return None
        from agentsla.alerts.incidents.queries import scope_of
        from agentsla.queries.spans import first_failing_span_ns

        window = self.rule_windows.get(alert.name, DEFAULT_WINDOW_S)
        start = min(alert.active_at, detected) - window
        try:
            first = first_failing_span_ns(cur, int(start * NS), int(detected * NS) + 1,
                                          scope_of(alert.labels, ffh_of(alert)))
        except Exception as exc:  # the onset is a courtesy: the incident opens without it
            log.warning("onset of %s failed: %s", alert.name, exc)
            return None
        return None if first is None else min(first / NS, detected)

    def _join(self, incident: Incident, alert: Alert, now: float, again: bool = False) -> None:
        fired = alert.fired_at or now
        member = IncidentAlert(alert.fingerprint, alert.name, _tier(alert), dict(alert.labels),
                               ffh_of(alert), fired)
        self.store.put_alert(incident.id, member)
        if TIERS.index(_tier(alert)) < TIERS.index(incident.severity):
            incident.severity = _tier(alert)
        incident.quiet_since, incident.updated_at = None, now
        self.store.save(incident)
        summary = alert.annotations.get("summary") or alert.name
        verb = "fired again" if again else "fired"
        self.store.add_entry(
            incident.id, fired, "alert_firing", f"{_tier(alert)} {alert.name} {verb}",
            f"{summary} (value {alert.value:.4g}); first failing hop: {hop_label(ffh_of(alert))}.",
            severity="critical" if _tier(alert) == "P0" else "warning", source="evaluator",
            labels=alert.labels, links=_links(alert), dedup=f"firing:{alert.fingerprint}:{fired}")
        if _links(alert)["task_ids"]:
            self.store.add_entry(incident.id, fired, "example_tasks",
                                 f"Example tasks of {alert.name}",
                                 "Tasks that failed under the alert's first failing hop.",
                                 source="evaluator", labels=alert.labels, links=_links(alert),
                                 dedup=f"examples:{alert.fingerprint}:{fired}")

    def _follow(self, incident: Incident, by_fp: dict[str, Alert], now: float) -> None:
        members = self.store.alerts(incident.id)
        for member in members:
            if member.resolved_at is not None:
                continue
            current = by_fp.get(member.fingerprint)
            if current is not None and current.state == State.FIRING:
                continue
            at = current.resolved_at if current is not None and current.resolved_at else now
            member.resolved_at = at
            self.store.put_alert(incident.id, member)
            self.store.add_entry(incident.id, at, "alert_resolved",
                                 f"{member.severity} {member.alertname} resolved",
                                 "The alert's condition stopped holding.", source="evaluator",
                                 labels=member.labels,
                                 dedup=f"resolved:{member.fingerprint}:{member.fired_at}")
        if any(m.resolved_at is None for m in members):
            return
        incident.quiet_since = max((m.resolved_at or now) for m in members) if members else now
        if now - incident.quiet_since >= self.settings.quiet_period_s:
            self._close(incident, now)
        else:
            self.store.save(incident)

    def _close(self, incident: Incident, now: float) -> None:
        incident.state, incident.resolved_at, incident.closed_at = "resolved", incident.quiet_since, now
        incident.updated_at = now
        self.signals.finish(incident)
        self.store.save(incident)
        from agentsla.alerts.incidents.report import rfc3339

        quiet = self.settings.quiet_period_s / 60
        ended = rfc3339(incident.resolved_at)
        self.store.add_entry(incident.id, now, "resolved", "Incident resolved",
                             f"The last alert resolved at {ended} and none fired again for "
                             f"{quiet:g} min.", source="tracker", dedup=f"closed:{incident.id}")
        log.warning("incident %s resolved", incident.id)

    # --- people ----------------------------------------------------------------------------

    @_locked
    def acknowledge(self, incident_id: str, author: str, now: float, source: str = "api") -> Incident:
        """Acknowledge an incident (the first acknowledgement counts; later ones are no-ops)."""
        incident = self.store.get(incident_id)
        if incident.acknowledged_at is None:
            incident.acknowledged_at, incident.acknowledged_by = now, author or "unknown"
            incident.updated_at = now
            self.store.save(incident)
            self.store.add_entry(incident_id, now, "ack", f"Acknowledged by {author or 'unknown'}",
                                 "", source=source, labels={"author": author or "unknown"},
                                 dedup=f"ack:{incident_id}")
        return incident

    @_locked
    def note(self, incident_id: str, kind: str, author: str, text: str, now: float,
             at: float | None = None, labels: Mapping[str, str] | None = None,
             source: str = "api") -> int:
        """Add a note, a change marker (deploy, model switch, config change) or mitigation.

        Returns the new entry's id. `mitigated` also sets the incident's mitigated time (once).
        """
        if kind not in NOTE_KINDS:
            raise PermanentError(f"bad kind {kind!r}: expected one of {', '.join(NOTE_KINDS)}")
        if not str(text).strip():
            raise PermanentError("a note needs a text")
        incident = self.store.get(incident_id)
        at = now if at is None else at
        if kind == "mitigated" and incident.mitigated_at is None:
            incident.mitigated_at, incident.updated_at = at, now
            self.store.save(incident)
        titles = {"note": "Note", "change": "Change", "mitigated": "Mitigated"}
        entry_id = self.store.add_entry(incident_id, at, kind,
                                        f"{titles[kind]} by {author or 'unknown'}", str(text),
                                        severity="info", source=source,
                                        labels={**(labels or {}), "author": author or "unknown"})
        assert entry_id is not None  # no dedup key: always inserted
        return entry_id


def _tier(alert: Alert) -> str:
    tier = alert.labels.get("severity") or alert.labels.get("tier") or "P2"
    return tier if tier in TIERS else "P2"


def _links(alert: Alert) -> dict[str, list[str]]:
    return {"task_ids": [str(t) for t in alert.context.get("example_task_ids") or []],
            "trace_ids": [str(t) for t in alert.context.get("example_trace_ids") or []]}
