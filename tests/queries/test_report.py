"""`agentsla report` against the real API app, bridged in-process through the client."""

from __future__ import annotations

import asyncio
import io
import json

import httpx
import pytest
from rich.console import Console

from agentsla.cli import build_parser
from agentsla.client import ApiClient
from agentsla.commands import report
from agentsla.config import load_config
from agentsla.api.app import create_api_app
from agentsla.queries.engines.duckdb import cursor_stores
from queryrows import NS, T0, insert, task


def _bridge(app) -> httpx.MockTransport:
    """A sync transport that answers each request by running the ASGI app."""
    async def call(request: httpx.Request) -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as client:
            response = await client.request(request.method, str(request.url),
                                            headers=request.headers)
            return httpx.Response(response.status_code, headers=response.headers,
                                  content=response.content)

    return httpx.MockTransport(lambda request: asyncio.run(call(request)))


@pytest.fixture
def client(tmp_path):
    import duckdb

    from agentsla.collector.store.schema import migrate
    con = duckdb.connect(str(tmp_path / "r.duckdb"))
    migrate(con)
    timeout = {"ffh_kind": "model", "ffh_name": "gpt-4o", "ffh_reason": "timeout"}
    insert(con, tasks=[task("ok", end_s=10, duration_ms=800),
                       task("bad", "failed", end_s=20, duration_ms=31_000, **timeout)])
    app = create_api_app(cursor_stores(con), load_config(environ={}), dict, now=lambda: T0 + 60 * NS)
    yield ApiClient("http://api.test", transport=_bridge(app))
    con.close()


def _args(*argv):
    return build_parser().parse_args(["report", *argv])


def test_tables(client):
    out = io.StringIO()
    assert report.run(_args("--window", "1h"), {}, client=client,
                      console=Console(file=out, width=200)) == 0
    text = out.getvalue()
    assert "50.0%" in text            # success rate: 1 of 2
    assert "model:gpt-4o" in text     # the top root cause
    assert "31.0" in text             # seconds lost
    # p50 of 800 ms and 31 s is 15.90 s; from histograms within 1.1 % (docs/rollups.md): the
    # bucket midpoints 798.3 ms and 31.04 s give 15.92 s
    assert "15.92 s" in text


def test_json(client, capsys):
    assert report.run(_args("--json", "--group-by", "tenant_id"), {}, client=client) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"sla", "root_causes", "hops", "slo"}
    assert data["sla"]["groups"][0]["tenant_id"] == "acme"


def test_bad_window_surfaces_the_api_message(client):
    from agentsla.errors import PermanentError
    with pytest.raises(PermanentError, match="bad window 'soon'"):
        report.run(_args("--window", "soon"), {}, client=client)


@pytest.mark.parametrize("ms, text", [(None, "—"), (0.4, "0 ms"), (800, "800 ms"),
                                      (999.4, "999 ms"), (1500, "1.50 s")])
def test_duration_format(ms, text):
    assert report.duration(ms) == text
