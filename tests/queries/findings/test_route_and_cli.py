"""GET /api/v1/findings and `agentsla findings`, over the real API app in-process."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
from pathlib import Path

import httpx
import pytest
from rich.console import Console
from shapes import Trace
from spanfactory import BASE_NS

from agentsla.cli import build_parser
from agentsla.client import ApiClient
from agentsla.commands import findings as findings_command
from agentsla.config import load_config
from agentsla.errors import PermanentError
from agentsla.api.app import create_api_app
from agentsla.queries.engines.duckdb import cursor_stores
from agentsla.queries.findings import THRESHOLDS

NOW = BASE_NS + 600 * 1_000_000_000
DOCS = Path(__file__).parents[3] / "docs" / "findings.md"


def _bridge(app) -> httpx.MockTransport:
    async def call(request: httpx.Request) -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as client:
            response = await client.request(request.method, str(request.url))
            return httpx.Response(response.status_code, headers=response.headers,
                                  content=response.content)
    return httpx.MockTransport(lambda request: asyncio.run(call(request)))


@pytest.fixture
def client(load_database):
    t = Trace(root_end_ms=50_000, error_type="timeout", status_code="error")
    t.child(t.root, "model", "gpt-4o", 10, 45_010, hop_timeout_ms=45_000, retry_max=2,
            error_type="timeout")
    con = load_database(t.rows)
    config = load_config(environ={})
    overrides = dataclasses.replace(config, findings={"budget_inversion_min_share": 0.5})
    app = create_api_app(cursor_stores(con), overrides, dict, now=lambda: NOW)
    return ApiClient("http://api.test", transport=_bridge(app))


def test_route_answers_window_and_findings(client):
    body = client.findings(window="1h")
    # the hour before NOW, widened to whole minutes (NOW is 20 s into its minute)
    minute = 60 * 10**9
    assert (body["window"]["from_ns"], body["window"]["to_ns"]) == (
        (NOW - 3600 * 10**9) // minute * minute, NOW // minute * minute + minute)
    assert body["window"]["to"].endswith(":00.000Z") and body["kind"] is None
    (f,) = body["findings"]
    assert (f["type"], f["severity"], f["hop"]) == (
        "budget_inversion", "critical", {"kind": "model", "name": "gpt-4o"})
    assert f["hint"].startswith("model gpt-4o timeout 45 s × 3 attempts = 135 s exceeds the "
                                "60 s left under gateway")


@pytest.mark.parametrize("params, message", [
    ({"kind": "nope"}, "bad kind 'nope'"),
    ({"window": "soon"}, "bad window 'soon'"),
    ({"severity": "critical"}, "unknown parameter 'severity'"),
])
def test_route_refuses_bad_parameters(client, params, message):
    with pytest.raises(PermanentError, match=message):
        client.get("/api/v1/findings", params)


def _args(*argv):
    return build_parser().parse_args(["findings", *argv])


def test_cli_table(client):
    out = io.StringIO()
    assert findings_command.run(_args("--window", "1h"), {}, client=client,
                                console=Console(file=out, width=200)) == 0
    text = out.getvalue()
    assert "budget_inversion" in text and "critical" in text and "model gpt-4o" in text
    assert "worst_case=135s" in text


def test_cli_json_and_kind(client, capsys):
    assert findings_command.run(_args("--json", "--kind", "ghost_work"), {}, client=client) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == []


def test_docs_list_every_threshold():
    text = DOCS.read_text()
    missing = [t.name for t in THRESHOLDS if f"`{t.name}`" not in text]
    assert not missing
