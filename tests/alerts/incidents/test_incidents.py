"""IncidentTracker: opening on P0/P1, joining related alerts, quiet-period resolution, people's
actions and persistence, driven with hand-made alerts and fixed timestamps."""

from __future__ import annotations

import pytest

from agentsla.alerts.rules.evaluator import Alert, State
from agentsla.alerts.incidents.store import IncidentStore
from agentsla.alerts.incidents.tracker import IncidentSettings, IncidentTracker, related
from agentsla.alerts.state import Store
from agentsla.contract import FailingHop
from agentsla.errors import NotFound, PermanentError

T = 1_700_000_000.0
QUIET = 600.0


DB_TIMEOUT = FailingHop("tool", "db", "timeout")


def _alert(name: str, severity: str, fired: float | None, state: State = State.FIRING,
           ffh: FailingHop | None = None, resolved: float | None = None, **labels) -> Alert:
    context = {"first_failing_hop": ffh and ffh.to_json(), "example_task_ids": ["t1"],
               "example_trace_ids": ["a" * 32]} if ffh else {}
    return Alert({"alertname": name, "severity": severity, **labels}, {"summary": f"{name} x"},
                 state, 0.5, active_at=(fired or T) - 60, fired_at=fired, resolved_at=resolved,
                 context=context)


def _tracker(path) -> IncidentTracker:
    return IncidentTracker(IncidentStore(Store(path)), IncidentSettings(quiet_period_s=QUIET))


@pytest.fixture
def tracker(tmp_path):
    tracker = _tracker(tmp_path / "alerts.sqlite")
    yield tracker
    tracker.store.store.close()


@pytest.mark.parametrize("a, b, ffh_a, ffh_b, expected", [
    ({"task_type": "chat"}, {"task_type": "chat", "hop_name": "x"}, None, None, True),  # label
    ({"task_type": "chat"}, {"task_type": "search"}, None, None, False),  # other value
    ({"hop_kind": "tool"}, {"hop_kind": "tool"}, None, None, False),      # kind alone is too broad
    ({}, {}, DB_TIMEOUT, FailingHop("tool", "db", "circuit_open"), True),  # other reason
    ({}, {}, DB_TIMEOUT, FailingHop("model", "gpt-4o", "timeout"), False),
    ({}, {}, FailingHop("tool", "db (v2) x"), FailingHop("tool", "db"), False),  # names whole
    ({}, {}, FailingHop("tool", "db"), FailingHop("model", "db"), False),  # kind matters
    ({}, {}, None, None, False),                                          # nothing to relate on
])
def test_related(a, b, ffh_a, ffh_b, expected):
    assert related(a, b, ffh_a, ffh_b) is expected


def test_related_alerts_join_and_unrelated_open_another(tracker):
    chat = _alert("TaskSuccessLow", "P0", T, task_type="chat", ffh=DB_TIMEOUT)
    tool = _alert("ToolErrorRateHigh", "P1", T + 30, hop_kind="tool", hop_name="db",
                  ffh=FailingHop("tool", "db", "circuit_open"))
    other = _alert("QueueWaitHigh", "P1", T + 40, service_name="billing")
    digest = _alert("TokenQuotaPredicted", "P2", T + 50, model="gpt-4o")
    tracker.observe(T + 60, [chat, tool, other, digest])
    incidents = {i.title.split(":")[0]: i for i in tracker.store.list()}
    assert set(incidents) == {"TaskSuccessLow", "QueueWaitHigh"}  # a P2 alone opens none
    first = incidents["TaskSuccessLow"]
    assert [a.alertname for a in tracker.store.alerts(first.id)] == ["TaskSuccessLow",
                                                                     "ToolErrorRateHigh"]
    assert (first.severity, first.detected_at, first.first_failing_hop) == \
        ("P0", T, DB_TIMEOUT)
    # A P2 related to an open incident joins it.
    tracker.observe(T + 70, [chat, tool, other, _alert("Budget", "P2", T + 65, task_type="chat")])
    assert len(tracker.store.alerts(first.id)) == 3
    kinds = [e.kind for e in tracker.store.entries(first.id)]
    assert kinds[:3] == ["opened", "alert_firing", "example_tasks"]
    assert kinds.count("alert_firing") == 3


def test_resolves_after_the_quiet_period_and_refire_keeps_it_open(tracker):
    alert = _alert("ToolErrorRateHigh", "P1", T, hop_name="db")
    tracker.observe(T, [alert])
    [incident] = tracker.store.list()
    resolved = _alert("ToolErrorRateHigh", "P1", T, State.RESOLVED, resolved=T + 300, hop_name="db")
    tracker.observe(T + 300, [resolved])
    tracker.observe(T + 300 + QUIET - 1, [resolved])
    assert tracker.store.get(incident.id).state == "open"
    again = _alert("ToolErrorRateHigh", "P1", T + 400, hop_name="db")  # fires again in the quiet
    tracker.observe(T + 400, [again])
    assert tracker.store.get(incident.id).quiet_since is None
    assert len(tracker.store.list()) == 1  # the same incident, not a new one
    final = _alert("ToolErrorRateHigh", "P1", T + 400, State.RESOLVED, resolved=T + 500, hop_name="db")
    tracker.observe(T + 500, [final])
    tracker.observe(T + 500 + QUIET, [])  # the resolved alert aged out of the list meanwhile
    done = tracker.store.get(incident.id)
    assert (done.state, done.resolved_at, done.closed_at) == ("resolved", T + 500, T + 500 + QUIET)
    assert done.durations()["time_to_resolve_s"] == 500
    kinds = [e.kind for e in tracker.store.entries(incident.id)]
    assert kinds == ["opened", "alert_firing", "alert_resolved", "alert_firing",
                     "alert_resolved", "resolved"]
    # After it closed, the same alert firing opens a new incident.
    tracker.observe(T + 2000, [_alert("ToolErrorRateHigh", "P1", T + 2000, hop_name="db")])
    assert len(tracker.store.list(state="open")) == 1 and len(tracker.store.list()) == 2


def test_ack_notes_and_mitigation(tracker):
    tracker.observe(T, [_alert("A", "P0", T, task_type="chat")])
    [incident] = tracker.store.list()
    tracker.acknowledge(incident.id, "ana", T + 120)
    tracker.acknowledge(incident.id, "bob", T + 200)  # the first acknowledgement counts
    tracker.note(incident.id, "change", "ana", "rolled back deploy 4711", T + 250,
                 labels={"change": "deploy"})
    tracker.note(incident.id, "mitigated", "ana", "traffic shifted to backup", T + 300, at=T + 290)
    got = tracker.store.get(incident.id)
    assert (got.acknowledged_at, got.acknowledged_by, got.mitigated_at) == (T + 120, "ana", T + 290)
    assert got.durations()["time_to_acknowledge_s"] == 120
    entries = tracker.store.entries(incident.id)
    assert [e.kind for e in entries][-3:] == ["ack", "change", "mitigated"]  # by time: 120, 250, 290
    with pytest.raises(PermanentError):
        tracker.note(incident.id, "rumour", "ana", "x", T)
    with pytest.raises(NotFound):
        tracker.acknowledge("INC-nope", "ana", T)


def test_a_stale_copy_never_clears_an_acknowledgement(tracker):
    tracker.observe(T, [_alert("A", "P0", T, task_type="chat")])
    [stale] = tracker.store.list()
    tracker.acknowledge(stale.id, "ana", T + 5)  # the API, while the loop holds `stale`
    stale.title = "renamed"
    tracker.store.save(stale)
    got = tracker.store.get(stale.id)
    assert (got.title, got.acknowledged_by) == ("renamed", "ana")


def test_incidents_survive_a_restart_without_duplicates(tmp_path):
    path = tmp_path / "alerts.sqlite"
    first = _tracker(path)
    alert = _alert("A", "P0", T, task_type="chat", ffh=DB_TIMEOUT)
    first.observe(T, [alert])
    [incident] = first.store.list()
    first.acknowledge(incident.id, "ana", T + 10)
    entries = len(first.store.entries(incident.id))
    first.store.store.close()
    second = _tracker(path)
    second.observe(T + 20, [alert])  # the restored alert is still firing
    assert [i.id for i in second.store.list()] == [incident.id]
    assert len(second.store.entries(incident.id)) == entries
    assert second.store.get(incident.id).acknowledged_by == "ana"
    second.store.store.close()
