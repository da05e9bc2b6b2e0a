"""Signals: the timeline sources an open incident watches besides its alerts.

Each round, for every incident still open (or closed within the last hour, so a late resolved
notification still lands): notifications sent or given up from the outbox, and silences
matching its alerts. At most once per `snapshot_interval`, when DuckDB is at hand: a snapshot of
the scope's success / budget-exhaustion / fallback rates and burn rate over `snapshot_window`,
a shift of the top first failing hop, findings not seen before in the incident, and the impact
so far. Failures here are logged and skipped: enrichment never stops the alert loop.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

from agentsla.alerts.incidents.store import Incident, IncidentStore
from agentsla.alerts.routing.matchers import matches_all, parse_matcher
from agentsla.alerts.rules.samples import NS
from agentsla.contract import FailingHop, hop_label
from agentsla.errors import NotOnThisStore

log = logging.getLogger("agentsla.alerts.incidents.tracker")
WATCH_AFTER_CLOSE_S = 3600.0
#: The incident data keys enrichment owns.
_ENRICHED = ("impact", "root_causes", "pareto_top", "findings", "findings_seen")
_FINDING_SEVERITY = {"critical": "critical", "warning": "warning", "info": "info"}


class Signals:
    """Collect notifications, silences, snapshots, Pareto shifts and findings into timelines."""

    def __init__(self, store: IncidentStore, settings, config=None, lock=None) -> None:
        self.store, self.settings, self.config = store, settings, config
        # held by the tracker's round and API edits: enrichment runs in its own thread
        self.lock = lock or threading.RLock()

    def collect(self, now: float, cur=None, deadline: float | None = None) -> None:
        """Run the sources for the watched incidents; stop the DuckDB ones at `deadline`.

        `deadline` is on time.monotonic(); the incidents not reached wait for the next call,
        the final totals of closed incidents first, then the longest without a snapshot.
        """
        watched = [i for i in self.store.list(since=now - WATCH_AFTER_CLOSE_S)
                   if i.state == "open" or (i.closed_at or now) >= now - WATCH_AFTER_CLOSE_S]
        if not watched:
            return
        members = {i.id: {a.fingerprint: a for a in self.store.alerts(i.id)} for i in watched}
        since = min(i.detected_at for i in watched) - 60.0
        self._notifications(watched, members, since)
        self._silences(watched, members, since)
        if cur is None or self.config is None:
            return
        for incident in sorted(watched, key=_urgency):
            if deadline is not None and time.monotonic() >= deadline:
                log.warning("incident enrichment ran out of its budget; the rest waits")
                return
            if incident.data.get("totals_due"):
                self._guarded(self._final, incident, now, cur)
            elif incident.state == "open" and self._snapshot_due(incident, now):
                self._guarded(self.snapshot, incident, now, cur)

    def _snapshot_due(self, incident: Incident, now: float) -> bool:
        last = incident.last_snapshot_at
        return last is None or now - last >= self.settings.snapshot_interval_s

    def finish(self, incident: Incident) -> None:
        """Mark a closing incident for its final impact and root causes (the next collect)."""
        incident.data["totals_due"] = True

    def _final(self, incident: Incident, now: float, cur) -> None:
        self._totals(incident, incident.resolved_at or now, cur)
        self._save(incident, totals_done=True)

    def _save(self, incident: Incident, totals_done: bool = False) -> None:
        # Merge onto the stored incident: the round or an acknowledgement may have changed it
        # since this thread read it, and those changes must survive.
        with self.lock:
            fresh = self.store.get(incident.id)
            fresh.data.update({k: incident.data[k] for k in _ENRICHED if k in incident.data})
            fresh.last_snapshot_at = incident.last_snapshot_at
            fresh.first_failing_hop = incident.first_failing_hop  # the headline is enrichment's
            fresh.first_failing_hop_share = incident.first_failing_hop_share
            if totals_done:
                fresh.data.pop("totals_due", None)
            self.store.save(fresh)

    def _guarded(self, fn, incident: Incident, now: float, cur) -> None:
        try:
            fn(incident, now, cur)
        except Exception as exc:  # noqa: BLE001 - enrichment is best effort
            log.warning("incident %s: %s failed: %s", incident.id, fn.__name__, exc)

    # --- notifications and silences --------------------------------------------------------

    def _notifications(self, watched: list[Incident], members: dict, since: float) -> None:
        rows = self.store.store.query(
            "select id, integration, notification, status, created_at, sent_at, last_error, "
            "attempts from outbox where status <> 'pending' and created_at >= ? order by seq",
            (since,))
        for row in rows:
            note = json.loads(row["notification"])
            fps = {a.get("fingerprint") for a in note.get("alerts", [])}
            for incident in watched:
                if not fps & set(members[incident.id]):
                    continue
                self._notification_entry(incident, row, note)

    def _notification_entry(self, incident: Incident, row, note: dict) -> None:
        sent = row["status"] == "sent"
        status = note.get("status", "firing")
        title = (f"Notification {'sent' if sent else row['status']}: {status} to "
                 f"{row['integration']}")
        body = (f"{len(note.get('alerts', []))} alert(s), attempt(s) {row['attempts']}"
                + ("" if sent else f"; last error: {row['last_error'] or 'unknown'}"))
        self.store.add_entry(incident.id, row["sent_at"] or row["created_at"],
                             "notification_sent" if sent else "notification_failed", title, body,
                             severity="info" if sent else "warning", source="notifier",
                             labels={"integration": row["integration"], "status": status,
                                     "notification_id": row["id"]},
                             dedup=f"notify:{incident.id}:{row['id']}:{row['status']}")

    def _silences(self, watched: list[Incident], members: dict, since: float) -> None:
        rows = self.store.store.query("select * from silences where updated_at >= ?", (since,))
        for row in rows:
            matchers = tuple(parse_matcher(m) for m in json.loads(row["matchers"]))
            for incident in watched:
                if not any(matches_all(matchers, a.labels) for a in members[incident.id].values()):
                    continue
                expired = row["ends_at"] <= row["updated_at"]
                self.store.add_entry(
                    incident.id, row["updated_at"], "silence",
                    f"Silence {'expired' if expired else 'created'} by {row['created_by']}",
                    f"{row['comment']} (matchers {', '.join(json.loads(row['matchers']))})",
                    source="silences", labels={"silence_id": row["id"], "author": row["created_by"]},
                    dedup=f"silence:{incident.id}:{row['id']}:{'expired' if expired else 'created'}")

    # --- DuckDB-backed signals -------------------------------------------------------------

    def snapshot(self, incident: Incident, now: float, cur) -> None:
        """Record rates, the top first failing hop, new findings and the impact so far."""
        from agentsla.alerts.incidents.queries import scope_of, snapshot

        scope = scope_of(incident.labels)
        end = int(now * NS)
        start = end - int(self.settings.snapshot_window_s * NS)
        snap = snapshot(cur, self.config, start, end, scope)
        self.store.add_entry(incident.id, now, "snapshot", _snapshot_title(snap),
                             f"Over the last {self.settings.snapshot_window_s / 60:g} min in the "
                             "incident's scope.", source="evaluator", labels=_scope_labels(scope),
                             data=snap, dedup=f"snapshot:{incident.id}:{now:.3f}")
        incident.last_snapshot_at = now
        try:
            self._pareto(incident, now, cur, start, end, scope)
            self._findings(incident, now, cur, start, end)
            self._totals(incident, now, cur)
        finally:  # saved even when a part ran out of budget: the pace holds, no retry loop
            self._save(incident)

    def _pareto(self, incident: Incident, now: float, cur, start: int, end: int, scope) -> None:
        from agentsla.queries.tasks import task_trace_ids
        from agentsla.queries.root_causes import root_causes

        rows = root_causes(cur, start, end, scope["task_type"], scope["tenant_id"], limit=5)
        if not rows:
            return
        top = FailingHop.from_row(rows[0])
        previous = FailingHop.from_json(incident.data.get("pareto_top"))
        if top == previous:
            return
        incident.data["pareto_top"] = top and top.to_json()
        tasks = list(rows[0]["example_task_ids"] or [])[:3]
        traces = task_trace_ids(cur, tasks)
        self.store.add_entry(
            incident.id, now, "pareto_shift", f"Top first failing hop: {hop_label(top)}",
            f"{rows[0]['share']:.0%} of the blamed tasks in the last "
            f"{self.settings.snapshot_window_s / 60:g} min"
            + (f" (was {previous.label()})" if previous else ""),
            severity="warning", source="root_causes", labels={"first_failing_hop": hop_label(top)},
            links={"task_ids": tasks, "trace_ids": [traces[t] for t in tasks if t in traces]},
            data={"pareto": [_pareto_row(r) for r in rows]})

    def _findings(self, incident: Incident, now: float, cur, start: int, end: int) -> None:
        from agentsla.queries.tasks import task_trace_ids
        from agentsla.queries.findings import find_findings

        try:
            found = find_findings(cur, start, end, None, self.config.findings)
        except NotOnThisStore:  # the store does not run the detectors yet: the rest goes on
            return
        seen = set(incident.data.get("findings_seen", []))
        kept = incident.data.setdefault("findings", [])
        for finding in found:
            key = _finding_key(finding)
            if key in seen:
                continue
            seen.add(key)
            tasks = [e.get("task_id") for e in finding.get("examples", []) if e.get("task_id")][:3]
            traces = task_trace_ids(cur, tasks)
            kept.append({k: finding.get(k) for k in ("type", "severity", "hop", "task_type",
                                                     "hint", "evidence")})
            self.store.add_entry(
                incident.id, now, "finding", f"Finding: {finding['type']} at {_where(finding)}",
                finding.get("hint") or "", severity=_FINDING_SEVERITY.get(finding["severity"], "info"),
                source="findings", labels={"type": finding["type"], "where": _where(finding)},
                links={"task_ids": tasks, "trace_ids": [traces[t] for t in tasks if t in traces]},
                data={"evidence": finding.get("evidence")}, dedup=f"finding:{incident.id}:{key}")
        incident.data["findings_seen"] = sorted(seen)

    def _totals(self, incident: Incident, now: float, cur) -> None:
        from agentsla.alerts.incidents.queries import impact, scope_of
        from agentsla.queries.root_causes import root_causes

        scope = scope_of(incident.labels)
        start = int((incident.started_at or incident.detected_at) * NS)
        end = max(start + 1, int(now * NS))
        incident.data["impact"] = impact(cur, self.config, start, end, scope)
        rows = root_causes(cur, start, end, scope["task_type"], scope["tenant_id"], limit=5)
        incident.data["root_causes"] = [_pareto_row(r) for r in rows]
        _headline(incident, rows)


def _headline(incident: Incident, rows: list[dict]) -> None:
    """Name the dominant first failing hop over the incident so far, with its share."""
    top = next((r for r in rows if FailingHop.from_row(r)), None)
    if top is not None:  # no blamed task yet: the first alert's hop stays the headline
        incident.first_failing_hop = FailingHop.from_row(top)
        incident.first_failing_hop_share = top["share"]


def _urgency(incident: Incident) -> tuple:
    # final totals first, then the incident that waited longest for a snapshot
    return (not incident.data.get("totals_due"), incident.last_snapshot_at or 0.0)


def _snapshot_title(snap: dict[str, Any]) -> str:
    def pct(v):
        return "n/a" if v is None else f"{v:.1%}"
    burn = "n/a" if snap.get("burn_rate") is None else f"{snap['burn_rate']:.3g}x"
    return (f"Success {pct(snap.get('success_rate'))} · budget exhausted "
            f"{pct(snap.get('budget_exhausted_rate'))} · fallback {pct(snap.get('fallback_rate'))}"
            f" · burn {burn} ({snap.get('finished', 0)} tasks)")


def _scope_labels(scope: dict) -> dict[str, str]:
    return {k: str(v) for k, v in scope.items() if v}


def _pareto_row(row: dict) -> dict:
    return {k: row.get(k) for k in ("ffh_kind", "ffh_name", "ffh_reason", "tasks", "share",
                                    "seconds_lost", "example_task_ids")}


def _where(finding: dict) -> str:
    hop = finding.get("hop") or {}
    if hop:
        return f"{hop.get('kind') or '?'} {hop.get('name') or '?'}"
    return f"task type {finding.get('task_type') or '?'}"


def _finding_key(finding: dict) -> str:
    return f"{finding['type']}/{finding.get('rule')}/{_where(finding)}"
