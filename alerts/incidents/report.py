"""Shape an incident into its document: the `agentsla.incident/2` JSON every export renders.

The document is plain data (the JSON export *is* it; CSV, Markdown and HTML render from it),
described by alerts/export/incident.schema.json. Times are unix seconds (`*_at`) with an
RFC 3339 twin (`started`, `detected`, ..., and each entry's `time`).
"""

from __future__ import annotations

from typing import Any

from agentsla.alerts.incidents.store import Entry, Incident, IncidentStore
from agentsla.contract import FailingHop, hop_label

SCHEMA = "agentsla.incident/2"
_LIFECYCLE = ("started", "detected", "acknowledged", "mitigated", "resolved", "closed")


def rfc3339(at: float | None) -> str | None:
    """Format unix seconds as RFC 3339 UTC (milliseconds), None stays None."""
    from agentsla.queries.window import rfc3339 as from_ns

    return None if at is None else from_ns(int(round(at * 1e9)))


def summary(store: IncidentStore, incident: Incident) -> dict:
    """Describe an incident for lists: lifecycle, durations, scope, alerts and impact counts."""
    out = incident.to_json()
    for name in _LIFECYCLE:
        out[name] = rfc3339(out.get(f"{name}_at"))
    alerts = store.alerts(incident.id)
    out["alerts"] = [{"fingerprint": a.fingerprint, "alertname": a.alertname,
                      "severity": a.severity, "labels": a.labels,
                      "first_failing_hop": a.first_failing_hop and a.first_failing_hop.to_json(),
                      "fired_at": a.fired_at,
                      "fired": rfc3339(a.fired_at), "resolved_at": a.resolved_at,
                      "resolved": rfc3339(a.resolved_at)} for a in alerts]
    out["alert_count"] = len(alerts)
    return out


def headline_hop(incident: dict) -> str:
    """Display an incident summary's dominant first failing hop with its share of the blamed
    tasks: `model gpt-4o (rate_limited), 53% of blamed tasks`, or `unknown`."""
    return hop_label(FailingHop.from_json(incident.get("first_failing_hop")),
                     share=incident.get("first_failing_hop_share"))


def entry_json(entry: Entry) -> dict:
    """One timeline entry as the document carries it."""
    data = entry.to_json()
    at = data.pop("time")
    return {"id": data.pop("id"), "time": rfc3339(at), "at": at, **data}


def document(store: IncidentStore, incident_id: str, now: float) -> dict:
    """Build the full incident document (raises NotFound for an unknown id)."""
    incident = store.get(incident_id)
    entries = [entry_json(e) for e in store.entries(incident_id)]
    data = incident.data
    return {
        "schema": SCHEMA,
        "generated_at": rfc3339(now),
        "incident": summary(store, incident),
        "impact": data.get("impact"),
        "root_causes": data.get("root_causes") or [],
        "findings": data.get("findings") or [],
        "action_items": action_items(data),
        "series": [{"time": e["time"], "at": e["at"], **e["data"]}
                   for e in entries if e["kind"] == "snapshot"],
        "timeline": entries,
    }


def action_items(data: dict[str, Any]) -> list[dict]:
    """Suggest action items: one per finding (its fix hint), then the top first failing hop."""
    items = []
    for finding in data.get("findings") or []:
        hop = finding.get("hop") or {}
        where = (f"{hop.get('kind') or '?'} {hop.get('name') or '?'}" if hop
                 else f"task type {finding.get('task_type') or '?'}")
        items.append({"title": f"Fix {finding.get('type')} at {where}",
                      "hint": finding.get("hint") or "", "severity": finding.get("severity"),
                      "source": "finding"})
    causes = data.get("root_causes") or []
    if causes:
        top = causes[0]
        where = hop_label(FailingHop.from_row(top), reason=False)
        items.append({"title": f"Harden {where} against {top.get('ffh_reason') or 'failure'}",
                      "hint": f"It was the first failing hop of {top.get('tasks')} task(s) "
                              f"({(top.get('share') or 0):.0%} of the blamed tasks): add a "
                              "timeout, a fallback or a breaker sized to the callers' budget.",
                      "severity": "warning", "source": "root_causes"})
    return items
