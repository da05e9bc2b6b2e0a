"""The Incidents page under AppTest against a served alert service holding one incident."""

from __future__ import annotations

import dataclasses

import duckdb
import pytest
from starlette.applications import Starlette
from streamlit.testing.v1 import AppTest

from agentsla.alerts.rules.evaluator import Alert, State
from agentsla.alerts.service import AlertService
from agentsla.collector.store.schema import migrate
from agentsla.config import load_config
from agentsla.dashboard import render
from agentsla.queries.engines.duckdb import cursor_stores
from serverproc import free_port, serving
from seed import APP

T = 1_700_000_000.0
SCRIPT = "<script>alert(1)</script>"


@pytest.fixture
def incident_api(tmp_path):
    """The alert routes on a free port, with one P0 incident acknowledged and annotated."""
    con = duckdb.connect()
    migrate(con)
    config = dataclasses.replace(load_config(environ={}), alerts={"slo_rules": False,
                                                                  "default_rules": False})
    service = AlertService(config, cursor_stores(con), tmp_path, clock=lambda: T + 300)
    alert = Alert({"alertname": "TaskSuccessLow", "severity": "P0", "task_type": "chat"},
                  {"summary": f"chat fails {SCRIPT}"}, State.FIRING, 0.5, T - 60, fired_at=T,
                  context={"first_failing_hop": "model gpt-4o (timeout)",
                           "example_task_ids": ["t1"], "example_trace_ids": ["a" * 32]})
    service.incidents.observe(T, [alert])
    [incident] = service.incidents.store.list()
    service.incidents.note(incident.id, "change", "ana", f"deploy {SCRIPT}", T + 100)
    with serving(Starlette(routes=service.routes())) as url:
        yield url, incident.id, service
    service.store.close()
    con.close()


def _open(monkeypatch, url: str) -> AppTest:
    monkeypatch.setenv("AGENTSLA_API", url)
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.switch_page("views/incidents.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_lists_shows_timeline_and_offers_every_export(incident_api, monkeypatch):
    url, incident_id, _ = incident_api
    at = _open(monkeypatch, url)
    listing = at.table[0].value
    assert listing["id"].tolist() == [incident_id] and listing["severity"].tolist() == ["P0"]
    assert next(m.value for m in at.metric if m.label == "State") == "open"
    timeline = at.table[-1].value
    assert timeline["kind"].tolist()[:2] == ["opened", render.literal("alert_firing")]
    assert "change" in timeline["kind"].tolist()
    buttons = at.get("download_button")
    assert len(buttons) == 4


def test_acknowledge_from_the_page(incident_api, monkeypatch):
    url, incident_id, service = incident_api
    at = _open(monkeypatch, url)
    at.text_input(key="inc_author").input("ana").run()
    at.button(key="inc_ack").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert service.incidents.store.get(incident_id).acknowledged_by == "ana"


def test_api_down_is_said_plainly(monkeypatch):
    url = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("AGENTSLA_API", url)
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.switch_page("views/incidents.py").run()
    assert not at.exception
    assert at.error and at.error[0].value.startswith(f"cannot reach the agentsla API at {url}")
