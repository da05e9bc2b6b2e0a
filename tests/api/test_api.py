"""The query API in-process over a real store written by the TaskWriter."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from agentsla.api import alert_routes as alert_api
from agentsla.collector.store.database import open_store
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config
from agentsla.api import openapi
from agentsla.api.app import ROUTES, create_api_app
from agentsla.queries.engines.duckdb import cursor_stores
from spanfactory import BASE_NS, make_span

NS = 1_000_000_000
NOW = BASE_NS + 30 * NS
TRACE_OK, TRACE_BAD, TRACE_RUN = "a" * 32, "b" * 32, "c" * 32


def _spans() -> list[dict]:
    ok = make_span(trace_id=TRACE_OK, span_id="ok-root", hop_kind="gateway", start_ms=0,
                   end_ms=900, http_status=200, task_type="chat", tenant_id="acme",
                   service_name="web")  # every other span is of service "svc"
    ok["task_id"] = "ok-1"
    bad = make_span(trace_id=TRACE_BAD, span_id="bad-root", hop_kind="gateway", start_ms=0,
                    end_ms=5000, http_status=504, status_code="error", error_type="timeout",
                    task_type="chat", tenant_id="acme")
    bad["task_id"] = "bad-1"
    agent = make_span(span_id="bad-agent", parent=bad, hop_kind="agent", agent="planner",
                      start_ms=10, end_ms=4990)
    model = make_span(span_id="bad-model", parent=agent, hop_kind="model", model="gpt-4o",
                      start_ms=20, end_ms=4000, error_type="timeout",
                      attributes='{"gen_ai.request.model": "gpt-4o"}')
    running = make_span(trace_id=TRACE_RUN, span_id="run-child", parent_span_id="run-root",
                        hop_kind="tool", tool="search", start_ms=100, end_ms=200)
    return [ok, bad, agent, model, running]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    con = open_store(tmp_path_factory.mktemp("api") / "agentsla.duckdb")
    TaskWriter(con, load_config(environ={}).tasks).write(_spans(), now_ns=BASE_NS + 6 * NS)
    yield con
    con.close()


class Client:
    """A synchronous face over httpx's ASGI transport: each call runs the real app in-process."""

    def __init__(self, app) -> None:
        self.app = app

    def get(self, url: str, **kwargs) -> httpx.Response:
        return asyncio.run(self._get(url, **kwargs))

    async def _get(self, url: str, **kwargs) -> httpx.Response:
        transport = httpx.ASGITransport(app=self.app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.get(url, **kwargs)


def _client(store, token: str = "", connect=None) -> Client:
    config = load_config(environ={})
    config = dataclasses.replace(config, server=dataclasses.replace(config.server, api_token=token))
    app = create_api_app(connect or cursor_stores(store), config, lambda: {"queue_bytes": 0},
                         stats=lambda: {"spans_accepted_total": 5, "spans_refused_total": 0},
                         now=lambda: NOW)
    return Client(app)


@pytest.fixture(scope="module")
def client(store):
    return _client(store)


def test_health(client):
    assert client.get("/api/v1/health").json() == {"status": "ok", "queue_bytes": 0}


def test_sla_totals_groups_and_series(client):
    body = client.get("/api/v1/sla", params={"window": "1h", "group_by": "task_type",
                                             "step": "10m"}).json()
    totals = body["totals"]
    assert (totals["finished"], totals["success"], totals["failed"], totals["in_progress"]) == (
        2, 1, 1, 1)
    assert totals["success_rate"] == 0.5 and totals["gateway_success_rate"] == 0.5
    assert [g["task_type"] for g in body["groups"]] == ["chat", None]  # the running task: no type yet
    assert len(body["series"]) == 6 and sum(b["finished"] for b in body["series"]) == 2
    assert body["window"]["to_ns"] == NOW and body["window"]["to"] == "2023-11-14T22:13:50.000Z"


def test_task_detail_has_first_failing_hop_and_tree(client):
    body = client.get("/api/v1/tasks/bad-1").json()
    assert body["outcome"] == "failed"
    assert body["first_failing_hop"]["kind"] == "model"
    assert body["first_failing_hop"]["name"] == "gpt-4o"
    assert body["first_failing_hop"]["reason"] == "timeout"
    (root,) = body["spans"]
    assert root["span_id"] == "bad-root"
    assert root["children"][0]["children"][0]["attributes"] == {"gen_ai.request.model": "gpt-4o"}
    assert client.get("/api/v1/tasks/ok-1").json()["first_failing_hop"] is None


def test_trace_and_lists(client):
    trace = client.get(f"/api/v1/traces/{TRACE_BAD}").json()
    assert trace["task_ids"] == ["bad-1"] and trace["spans"][0]["span_id"] == "bad-root"
    tasks = client.get("/api/v1/tasks").json()["tasks"]
    assert {t["task_id"] for t in tasks} == {"ok-1", "bad-1", TRACE_RUN}
    failed = client.get("/api/v1/tasks", params={"outcome": "failed", "ffh_kind": "model"}).json()
    assert [t["task_id"] for t in failed["tasks"]] == ["bad-1"]
    causes = client.get("/api/v1/root-causes", params={"step": "5m"}).json()
    assert causes["blamed_tasks"] == 1
    assert causes["root_causes"][0]["example_task_ids"] == ["bad-1"]
    hops = client.get("/api/v1/hops", params={"hop_kind": "model"}).json()["hops"]
    assert [(h["hop_name"], h["timeouts"]) for h in hops] == [("gpt-4o", 1)]
    budget = client.get("/api/v1/budget").json()
    assert budget["tasks"] == 2 and {k["hop_kind"] for k in budget["by_hop_kind"]} == {
        "gateway", "agent", "model"}
    slos = client.get("/api/v1/slo").json()["slos"]
    assert slos[0]["task_type"] == "chat" and slos[0]["burn_rates"]["5m"] == pytest.approx(500)


@pytest.mark.parametrize("url, status, message", [
    ("/api/v1/sla?window=soon", 400, "bad window 'soon'"),
    ("/api/v1/sla?window=-5m", 400, "bad window"),
    ("/api/v1/sla?group_by=outcome", 400, "bad group_by 'outcome'"),
    ("/api/v1/sla?step=0s", 400, "bad step '0s': must be greater than zero"),
    ("/api/v1/sla?step=1ms", 400, "more than 2000 buckets"),
    ("/api/v1/sla?from=2024-01-02T00:00:00Z&to=2024-01-01T00:00:00Z", 400, "must be before"),
    ("/api/v1/sla?from=yesterday", 400, "bad from 'yesterday'"),
    ("/api/v1/sla?from=2024-01-01T00:00:00", 400, "needs a time zone"),
    ("/api/v1/sla?from=1700000000&window=1h", 400, "not both"),
    ("/api/v1/sla?windw=1h", 400, "unknown parameter 'windw'"),
    ("/api/v1/tasks?limit=0", 400, "bad limit '0'"),
    ("/api/v1/hops?step=soon", 400, "bad step 'soon'"),
    ("/api/v1/hops?step=0s", 400, "bad step '0s': must be greater than zero"),
    ("/api/v1/hops?window=1h&step=1s", 400, "more than 2000 buckets"),
    ("/api/v1/hops?step=1m&series_limit=0", 400, "bad series_limit '0'"),
    ("/api/v1/hops?series_limit=101", 400, "bad series_limit '101'"),
    ("/api/v1/slo?service_name=gw", 400, "unknown parameter 'service_name'"),
    ("/api/v1/tasks?limit=5000", 400, "bad limit"),
    ("/api/v1/tasks?outcome=meh", 400, "bad outcome 'meh'"),
    ("/api/v1/tasks/nope", 404, "unknown task 'nope'"),
    ("/api/v1/traces/" + "0" * 32, 404, "unknown trace"),
    ("/api/v1/nothing", 404, "Not Found"),
])
def test_errors_are_json(client, url, status, message):
    response = client.get(url)
    assert response.status_code == status
    assert message in response.json()["error"]


@pytest.mark.parametrize("params", [
    {"task_type": "chat' or '1'='1"},
    {"tenant_id": "x'); drop table task_store; --"},
    {"ffh_name": "\" or 1=1 --"},
])
def test_injection_shaped_values_are_bound(client, params):
    response = client.get("/api/v1/tasks", params=params)
    assert response.status_code == 200 and response.json()["tasks"] == []
    assert client.get("/api/v1/sla").json()["totals"]["finished"] == 2  # nothing was dropped


def test_token(store):
    c = _client(store, token="s3cret")
    assert c.get("/api/v1/health").status_code == 200
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}):
        response = c.get("/api/v1/sla", headers=headers)
        assert response.status_code == 401 and "bearer token" in response.json()["error"]
    assert c.get("/metrics").status_code == 401
    assert c.get("/api/v1/sla", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_unexpected_error_is_500_without_traceback(store):
    def broken():
        raise RuntimeError("disk on fire at /secret/path")

    response = _client(store, connect=broken).get("/api/v1/sla")
    assert response.status_code == 500
    assert response.json() == {"error": "internal error; see the agentsla server log"}


def test_openapi_describes_every_route(client):
    doc = client.get("/api/v1/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    # The alert service's routes are mounted into the same app by `agentsla serve`.
    alert_routes = alert_api.alert_routes(SimpleNamespace(config=load_config(environ={})))
    assert {e.path for e in ROUTES} | {r.path for r in alert_routes} == set(doc["paths"])
    for route in alert_routes:
        assert {m.lower() for m in route.methods} - {"head"} == set(doc["paths"][route.path])
    for path, item in doc["paths"].items():
        for op in item.values():
            assert op["summary"] and {"200", "201"} & set(op["responses"]), path
            for name in re.findall(r"{(\w+)}", path):
                assert any(p["name"] == name and p["in"] == "path"
                           for p in op["parameters"]), path
    refs = set(re.findall(r'"#/components/schemas/(\w+)"', str(doc).replace("'", '"')))
    assert refs <= set(doc["components"]["schemas"])
    assert openapi.query_params("/api/v1/sla") == {"from", "to", "window", "step", "group_by",
                                                   "task_type", "tenant_id", "service_name"}


@pytest.mark.parametrize("path, params", [
    # every task-level question filters by the task's service, hops through the task
    ("/api/v1/sla", {"service_name"}),
    ("/api/v1/root-causes", {"service_name"}),
    ("/api/v1/budget", {"service_name"}),
    ("/api/v1/tasks", {"service_name"}),
    ("/api/v1/hops", {"service_name", "step", "series_limit"}),
])
def test_openapi_lists_the_new_params(client, path, params):
    op = client.get("/api/v1/openapi.json").json()["paths"][path]["get"]
    assert params <= {p["name"] for p in op["parameters"] if p["in"] == "query"}


def test_api_md_lists_each_routes_parameters():
    text = (Path(__file__).parents[2] / "docs" / "api.md").read_text()
    sections = re.findall(r"### `GET (/\S+)`\nParameters: (.*?)\.\n", text, re.S)
    assert len(sections) >= 6
    for path, params in sections:
        named = set(re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", params)))
        assert named == openapi.query_params(path), path


@pytest.mark.parametrize("path, count, expected", [
    # route, what to count, {service_name: count}: ok-1 is of service web, bad-1 of svc
    ("/api/v1/sla", lambda body: body["totals"]["finished"], {None: 2, "svc": 1, "web": 1}),
    ("/api/v1/root-causes", lambda body: body["blamed_tasks"], {None: 1, "svc": 1, "web": 0}),
    ("/api/v1/budget", lambda body: body["tasks"], {None: 2, "svc": 1, "web": 1}),
    ("/api/v1/tasks", lambda body: sorted(t["task_id"] for t in body["tasks"] if t["finished"]),
     {None: ["bad-1", "ok-1"], "svc": ["bad-1"], "web": ["ok-1"]}),
    ("/api/v1/hops", lambda body: [(h["hop_kind"], h["calls"]) for h in body["hops"]
                                   if h["hop_kind"] in ("gateway", "model")],
     {None: [("gateway", 2), ("model", 1)], "svc": [("gateway", 1), ("model", 1)],
      "web": [("gateway", 1)]}),
    ("/api/v1/sla", lambda body: body["totals"]["finished"], {"nope": 0, "web' or '1'='1": 0}),
])
def test_service_name_filters_each_route(client, path, count, expected):
    for service, want in expected.items():
        response = client.get(path, params={"service_name": service} if service else {})
        assert response.status_code == 200, response.text
        assert count(response.json()) == want, service


def test_hops_series_only_with_step(client):
    assert client.get("/api/v1/hops").json()["series"] is None
    body = client.get("/api/v1/hops", params={"window": "1h", "step": "10m",
                                              "series_limit": 2}).json()
    assert body["window"]["step_s"] == 600.0
    series = body["series"]
    # every span ended 25 to 30 s before NOW: in the last 10-minute bucket of the hour
    assert {r["bucket_ns"] for r in series} == {NOW - 3600 * NS + 5 * 600 * NS}
    # the two busiest hops by calls: gateway (2 spans), then agent (ties at 1: kind order)
    assert [(r["hop_kind"], r["calls"]) for r in series] == [("gateway", 2), ("agent", 1)]
    assert series[0]["error_rate"] == 0.5 and series[0]["bucket"].endswith("Z")


_SAMPLE = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*"'
                     r'(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")*)?\})? '
                     r'([-+]?[0-9.e+-]+|NaN|[+-]Inf)')
_COMMENT = re.compile(r"# (HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* "
                      r"(counter|gauge|histogram|summary|untyped))")


def _metrics_client(store, clock: list[int]) -> Client:
    """An app whose clock the test moves: /metrics counts minutes as they settle."""
    return Client(create_api_app(cursor_stores(store), load_config(environ={}),
                                 lambda: {"queue_bytes": 0},
                                 stats=lambda: {"spans_accepted_total": 5}, now=lambda: clock[0]))


def test_metrics_follow_the_exposition_format(store):
    clock = [NOW]
    c = _metrics_client(store, clock)
    assert c.get("/metrics").status_code == 200  # the first scrape: nothing settled yet
    clock[0] = NOW + 4 * 60 * NS  # the story's minute settled
    response = c.get("/metrics")
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    lines = response.text.rstrip("\n").split("\n")
    for line in lines:
        assert _SAMPLE.fullmatch(line) or _COMMENT.fullmatch(line), line
    samples = dict(line.rsplit(" ", 1) for line in lines if not line.startswith("#"))
    assert float(samples['agentsla_tasks_total{outcome="success",task_type="chat"}']) == 1
    assert float(samples['agentsla_tasks_total{outcome="failed",task_type="chat"}']) == 1
    assert float(samples["agentsla_ingest_spans_accepted_total"]) == 5
    assert float(samples['agentsla_tasks_in_progress{task_type=""}']) == 1  # the running task


def test_metrics_speak_openmetrics_when_asked(store):
    clock = [NOW]
    c = _metrics_client(store, clock)
    clock[0] = NOW + 4 * 60 * NS
    response = c.get("/metrics", headers={"accept": "application/openmetrics-text; "
                                                    "version=1.0.0,text/plain;q=0.5"})
    assert response.headers["content-type"].startswith("application/openmetrics-text")
    assert response.text.endswith("# EOF\n")
    failed = next(line for line in response.text.splitlines()
                  if line.startswith('agentsla_tasks_total{outcome="failed",task_type="chat"}'))
    assert f'# {{trace_id="{TRACE_BAD}"}} 1.0' in failed
