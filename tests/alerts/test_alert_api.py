"""/api/v1/alerts and /api/v1/silences served by AlertService.routes(), and the CLI over them."""

from __future__ import annotations

import asyncio
import dataclasses

import httpx
import pytest
from starlette.applications import Starlette

from serverproc import serving
from agentsla.alerts.service import AlertService
from agentsla.cli import main
from agentsla.config import load_config
from agentsla.queries.engines.duckdb import cursor_stores

NOW = 1_700_000_000.0


def _service(con, tmp_path, token=""):
    config = load_config(environ={"AGENTSLA_API_TOKEN": token} if token else {})
    config = dataclasses.replace(config, alerts={"slo_rules": False})
    return AlertService(config, cursor_stores(con), tmp_path, None, clock=lambda: NOW)


def _client(service):
    app = Starlette(routes=service.routes())
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


def test_alerts_lists_current_rules_and_history(con, tmp_path):
    service = _service(con, tmp_path)

    async def go():
        await service.tick(NOW + 600)  # watched 10 min of an empty database: the switch fires
        async with _client(service) as client:
            answer = (await client.get("/api/v1/alerts")).json()
            only_pending = (await client.get("/api/v1/alerts", params={"state": "pending"})).json()
            bad = await client.get("/api/v1/alerts", params={"history": "soon"})
        await service.stop()
        return answer, only_pending, bad

    answer, only_pending, bad = asyncio.run(go())
    [alert] = answer["alerts"]
    assert alert["labels"]["alertname"] == "NoSpansIngested" and alert["state"] == "firing"
    assert {r["name"] for r in answer["rules"]} >= {"ToolErrorRateHigh", "NoSpansIngested"}
    assert all(r["health"] == "ok" for r in answer["rules"]), [r for r in answer["rules"] if r["health"] != "ok"]
    assert [(h["from_state"], h["to_state"]) for h in answer["history"]] == [("inactive", "firing")]
    assert only_pending["alerts"] == []
    assert bad.status_code == 400 and "bad history" in bad.json()["error"]


def test_silences_create_list_expire(con, tmp_path):
    service = _service(con, tmp_path)

    async def go():
        async with _client(service) as client:
            created = await client.post("/api/v1/silences", json={
                "matchers": ['alertname="NoSpansIngested"'], "createdBy": "ana",
                "comment": "maintenance", "duration": "1h"})
            sid = created.json()["silenceID"]
            listed = (await client.get("/api/v1/silences")).json()["silences"]
            expired = await client.delete(f"/api/v1/silences/{sid}")
            missing = await client.delete("/api/v1/silences/nope")
            invalid = await client.post("/api/v1/silences", json={"matchers": ["x"], "createdBy": "a",
                                                                     "comment": "b"})
        await service.stop()
        return created, listed, expired, missing, invalid

    created, listed, expired, missing, invalid = asyncio.run(go())
    assert created.status_code == 201
    assert listed[0]["status"]["state"] == "active" and listed[0]["createdBy"] == "ana"
    assert expired.json()["silence"]["status"]["state"] == "expired"
    assert missing.status_code == 404
    assert invalid.status_code == 400 and "bad matcher" in invalid.json()["error"]


def test_token_is_required_when_configured(con, tmp_path):
    service = _service(con, tmp_path, token="s3cret")

    async def go():
        async with _client(service) as client:
            denied = await client.get("/api/v1/alerts")
            allowed = await client.get("/api/v1/silences", headers={"Authorization": "Bearer s3cret"})
        await service.stop()
        return denied, allowed

    denied, allowed = asyncio.run(go())
    assert denied.status_code == 401 and allowed.status_code == 200


@pytest.fixture
def served(con, tmp_path):
    service = _service(con, tmp_path)
    with serving(Starlette(routes=service.routes())) as url:
        yield url, service
    service.store.close()


def test_cli_silence_and_list(served, capsys):
    url, _ = served
    assert main(["alerts", "silence", "add", "--matcher", 'alertname="X"', "--author", "ana",
                 "--comment", "deploy", "--duration", "30m", "--api", url]) == 0
    sid = capsys.readouterr().out.strip()
    assert main(["alerts", "silence", "list", "--api", url]) == 0
    assert sid in capsys.readouterr().out
    assert main(["alerts", "silence", "expire", sid, "--api", url]) == 0
    assert main(["alerts", "list", "--api", url]) == 0
    assert "no alerts" in capsys.readouterr().out
    assert main(["alerts", "silence", "expire", "nope", "--api", url]) == 2
    assert "no silence with id 'nope' (HTTP 404)" in capsys.readouterr().err
