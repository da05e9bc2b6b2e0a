"""An outage that burns every SLO window at once pages once, at P0, and the incident lists one
detection: the generated SLO rules and their inhibitions on the simulated tool outage."""

from __future__ import annotations

import dataclasses

import duckdb

import incidentkit
from alertkit import HookServer
from agentsla.alerts.incidents.report import summary
from agentsla.alerts.incidents.store import IncidentStore
from agentsla.alerts.state import FILENAME, Store
from agentsla.config import load_config


def test_outage_burning_every_window_pages_once(incident_world, tmp_path):
    """The simulated tool outage fails tasks of two task types for 3 minutes: every burn window of the
    default 99.9 % SLO burns far above its factor, so all four rules fire in the same rounds."""
    with HookServer() as hook:
        alerts = {"default_rules": False, "slo_rules": True, "slo_min_tasks": 5,
                  "evaluation_interval": f"{incidentkit.STEP_S}s",
                  "route": {"receiver": "hook", "group_by": ["alertname", "task_type"],
                            "group_wait": "0s", "group_interval": "1m", "repeat_interval": "1h"},
                  "receivers": [{"name": "hook", "webhook_configs": [{"url": hook.url}]}]}
        config = dataclasses.replace(load_config(environ={}), alerts=alerts)
        con = duckdb.connect(str(incident_world["db"]), read_only=True)
        try:
            anchor = incident_world["anchor"]
            svc = incidentkit.service(con, config, tmp_path / "data", anchor)
            incidentkit.drive(svc, anchor, anchor + 360)
        finally:
            con.close()
    firing_alerts = [a for d in hook.ok() for a in d.json["alerts"] if a["status"] == "firing"]
    state = Store(tmp_path / "data" / FILENAME)
    try:
        seen = {h["labels"]["burn_factor"] for h in state.history(0) if h["to_state"] == "firing"}
        store = IncidentStore(state)
        detections = {i.labels["task_type"]: [(a["alertname"], a["severity"], a["labels"]["burn_factor"])
                                              for a in summary(store, i)["alerts"]]
                      for i in store.list()}
    finally:
        state.close()
    assert {"14.4", "6", "3", "1"} <= seen     # every window did fire
    # ...and each burning task type was told once, at P0, and opened one incident with one detection
    assert sorted((a["labels"]["task_type"], a["labels"]["burn_factor"]) for a in firing_alerts) == \
        [("order_status", "14.4"), ("support_chat", "14.4")]
    assert detections == {t: [("SLOErrorBudgetBurn", "P0", "14.4")]
                          for t in ("order_status", "support_chat")}
