"""An incident from a simulated outage: lifecycle, related alerts, entries in order, impact."""

from __future__ import annotations

from incidentkit import SCRIPT

from agentsla.alerts.incidents.store import IncidentStore
from agentsla.alerts.state import FILENAME, Store


def _store(world) -> IncidentStore:
    return IncidentStore(Store(world["data_dir"] / FILENAME))


def test_one_incident_with_the_expected_lifecycle(incident_world):
    store = _store(incident_world)
    t0 = incident_world["anchor"]
    [incident] = store.list()
    assert incident.state == "resolved" and incident.severity == "P0"
    assert incident.labels == {"task_type": "order_status"}
    assert incident.title == f"TaskSuccessLow: order_status tasks fail {SCRIPT}"
    # the dominant first failing hop over the whole incident (the headline), with its share
    assert (incident.first_failing_hop.kind, incident.first_failing_hop.name) == \
        ("tool", "query_orders_db")
    assert 0.3 < incident.first_failing_hop_share <= 1  # its timeouts (open breaker: the rest)
    # started (first failing span) < detected (first alert) < resolved < closed (quiet period)
    assert t0 + 30 < incident.started_at < incident.detected_at < incident.resolved_at
    assert incident.closed_at - incident.resolved_at >= 120
    durations = incident.durations()
    assert 0 < durations["time_to_detect_s"] < 180
    assert durations["time_to_resolve_s"] == incident.resolved_at - incident.started_at
    # the P1 tool alert shares the first failing hop, so it joined
    assert {a.alertname for a in store.alerts(incident.id)} == {"TaskSuccessLow",
                                                                "ToolErrorRateHigh"}


def test_timeline_entries_in_order(incident_world):
    store = _store(incident_world)
    [incident] = store.list()
    entries = store.entries(incident.id)
    times = [e.time for e in entries]
    assert times == sorted(times)
    kinds = [e.kind for e in entries]
    first = {k: kinds.index(k) for k in set(kinds)}
    assert kinds[0] == "impact_started" and kinds[-1] == "resolved"
    assert first["impact_started"] < first["opened"] < first["alert_firing"] < \
        first["notification_sent"] < first["alert_resolved"]
    for kind in ("snapshot", "pareto_shift", "finding", "example_tasks"):
        assert kind in kinds, kind
    assert kinds.count("alert_firing") == 2 and kinds.count("alert_resolved") == 2
    assert incident_world["delivered"] >= 2
    snapshots = [e for e in entries if e.kind == "snapshot"]
    assert all(b.time - a.time >= 60 for a, b in zip(snapshots, snapshots[1:]))  # rate-limited
    assert {"success_rate", "budget_exhausted_rate", "fallback_rate", "burn_rate"} <= \
        set(snapshots[0].data)
    findings = {e.labels["type"] for e in entries if e.kind == "finding"}
    assert "missing_timeout" in findings
    examples = next(e for e in entries if e.kind == "example_tasks")
    assert examples.links["task_ids"] and len(examples.links["trace_ids"][0]) == 32


def test_impact_counts_outcomes_budget_and_ghost_work(incident_world):
    store = _store(incident_world)
    [incident] = store.list()
    impact = incident.data["impact"]
    tasks = impact["tasks"]
    assert tasks["finished"] == sum(v for k, v in tasks.items() if k not in ("finished", "cancelled"))
    assert tasks["degraded"] + tasks["failed"] > 0
    [budget] = impact["error_budget"]
    assert budget["task_type"] == "order_status" and budget["minutes"] > 0
    assert impact["ghost_work"]["seconds"] > 0
    assert incident.data["root_causes"][0]["ffh_name"] == "query_orders_db"
