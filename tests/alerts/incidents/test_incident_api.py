"""The incident routes, every export format (parsed, escaped), and `agentsla incidents` over HTTP."""

from __future__ import annotations

import csv
import io
import json
import shutil
from html.parser import HTMLParser

import duckdb
import httpx
import incidentkit
import jsonschema
import pytest
from incidentkit import SCRIPT
from starlette.applications import Starlette

from serverproc import serving
from agentsla.alerts.incidents.export.json_format import json_schema
from agentsla.cli import main


@pytest.fixture
def served(incident_world, tmp_path):
    """The alert service over a copy of the incident's state, served on a free port."""
    data = tmp_path / "data"
    shutil.copytree(incident_world["data_dir"], data)
    con = duckdb.connect(str(incident_world["db"]), read_only=True)
    now = incident_world["anchor"] + incidentkit.END_S + 10
    service = incidentkit.service(con, incident_world["config"], data, now)
    with serving(Starlette(routes=service.routes())) as url, \
            httpx.Client(base_url=url, timeout=30) as client:
        [incident] = client.get("/api/v1/incidents").json()["incidents"]
        yield client, incident["id"], service
    service.store.close()
    con.close()


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)

    def handle_data(self, data) -> None:
        self.text.append(data)


def test_list_filters_and_errors(served):
    client, incident_id, _ = served
    assert [i["id"] for i in client.get("/api/v1/incidents", params={"state": "resolved"})
            .json()["incidents"]] == [incident_id]
    assert client.get("/api/v1/incidents", params={"state": "open"}).json()["incidents"] == []
    assert client.get("/api/v1/incidents", params={"to": "1000"}).json()["incidents"] == []
    bad = client.get("/api/v1/incidents", params={"state": "burning"})
    assert bad.status_code == 400 and "bad state" in bad.json()["error"]
    unknown = client.get("/api/v1/incidents", params={"sate": "open"})
    assert unknown.status_code == 400 and "unknown parameter 'sate'" in unknown.json()["error"]
    assert client.get("/api/v1/incidents/INC-nope").status_code == 404
    assert client.get(f"/api/v1/incidents/{incident_id}/timeline",
                      params={"format": "pdf"}).status_code == 400


def test_ack_and_notes_then_every_format_parses_and_escapes(served):
    client, incident_id, _ = served
    ack = client.post(f"/api/v1/incidents/{incident_id}/ack", json={"author": "ana"})
    assert ack.status_code == 200 and ack.json()["incident"]["acknowledged_by"] == "ana"
    note = client.post(f"/api/v1/incidents/{incident_id}/notes",
                       json={"kind": "change", "author": "ana", "text": f"deploy {SCRIPT} | *x*",
                             "labels": {"change": "deploy"}})
    assert note.status_code == 201 and note.json()["entry"]["kind"] == "change"
    bad = client.post(f"/api/v1/incidents/{incident_id}/notes", json={"kind": "gossip", "text": "x"})
    assert bad.status_code == 400
    base = f"/api/v1/incidents/{incident_id}/timeline"

    answer = client.get(base, params={"format": "json"})
    assert answer.headers["content-type"] == "application/json"
    doc = answer.json()
    jsonschema.validate(doc, json_schema())
    assert doc["schema"] == "agentsla.incident/2" and doc == client.get(
        f"/api/v1/incidents/{incident_id}").json() | {"generated_at": doc["generated_at"]}
    assert doc["incident"]["acknowledged_by"] == "ana"
    assert "change" in [e["kind"] for e in doc["timeline"]]

    answer = client.get(base, params={"format": "csv"})
    assert answer.headers["content-type"] == "text/csv; charset=utf-8"
    assert answer.headers["content-disposition"] == f'attachment; filename="{incident_id}-timeline.csv"'
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert len(rows) == len(doc["timeline"]) and rows[0]["kind"] == doc["timeline"][0]["kind"]

    answer = client.get(base, params={"format": "md"})
    assert answer.headers["content-type"] == "text/markdown; charset=utf-8"
    text = answer.text
    headings = [line for line in text.splitlines() if line.startswith("#")]
    for heading in ("## Summary", "## Impact", "## Root causes", "## Trigger", "## Detection",
                    "## Resolution", "## Action items", "## Lessons learned", "## Timeline"):
        assert heading in headings
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "deploy &lt;script&gt;alert(1)&lt;/script&gt; \\| \\*x\\*" in text

    answer = client.get(base, params={"format": "html"})
    assert answer.headers["content-type"] == "text/html; charset=utf-8"
    assert answer.headers["content-disposition"].startswith("attachment;")
    parser = _Tags()
    parser.feed(answer.text)
    assert "script" not in parser.tags and {"svg", "table", "polyline"} <= set(parser.tags)
    assert SCRIPT not in answer.text and any(SCRIPT in t for t in parser.text)  # shown as text
    assert "http://" not in answer.text.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_cli_list_show_ack_note_export(served, capsys, tmp_path):
    client, incident_id, _ = served
    api = ["--api", str(client.base_url)]
    assert main(["incidents", "list", *api]) == 0
    assert incident_id in capsys.readouterr().out
    assert main(["incidents", "ack", incident_id, "--author", "ana", *api]) == 0
    assert f"acknowledged {incident_id}" in capsys.readouterr().out
    assert main(["incidents", "note", incident_id, "--kind", "mitigated", "--author", "ana",
                 "--text", "breaker tuned", *api]) == 0
    assert main(["incidents", "show", incident_id, "--json", *api]) == 0
    doc = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert doc["incident"]["mitigated_at"] is not None
    assert [e["source"] for e in doc["timeline"] if e["kind"] in ("ack", "mitigated")] == ["cli", "cli"]
    out = tmp_path / "pm.md"
    assert main(["incidents", "export", incident_id, "--format", "md", "-o", str(out), *api]) == 0
    assert out.read_text().startswith("# Post-mortem: ")
    assert main(["incidents", "show", "INC-nope", *api]) == 2
    assert "no incident with id 'INC-nope' (HTTP 404)" in capsys.readouterr().err


def test_state_survives_a_service_restart(served, incident_world):
    client, incident_id, service = served
    client.post(f"/api/v1/incidents/{incident_id}/ack", json={"author": "ana"})
    before = client.get(f"/api/v1/incidents/{incident_id}").json()
    service.store.close()
    con = duckdb.connect(str(incident_world["db"]), read_only=True)
    restarted = incidentkit.service(con, incident_world["config"], service.store.path.parent,
                                    incident_world["anchor"] + incidentkit.END_S + 20)
    try:
        incidentkit.drive(restarted, incident_world["anchor"] + incidentkit.END_S + 20,
                          incident_world["anchor"] + incidentkit.END_S + 60)
        from agentsla.alerts.incidents.report import document
        from agentsla.alerts.incidents.store import IncidentStore
        from agentsla.alerts.state import Store

        store = IncidentStore(Store(service.store.path))
        after = document(store, incident_id, 0)
        store.store.close()
    finally:
        con.close()
    assert after["incident"]["acknowledged_by"] == "ana"
    assert [e["id"] for e in after["timeline"]] == [e["id"] for e in before["timeline"]]
