"""Tenant-scoped API tokens on a real `agentsla serve`: a tenant's token answers only that
tenant's tasks, rates, alerts, incidents and silences; admin tokens (the tokens file's `*` and
api_token) see everything; everything else is 401."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pytest
import yaml
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status
from serverproc import ServerProcess

ACME, GLOBEX, OPS, ROOT = "tok-acme", "tok-globex", "tok-ops", "tok-root"
#: (task id, tenant, failing tool or None): acme 2 of 3 succeed, globex 0 of 2.
TASKS = (("a1", "acme", None), ("a2", "acme", None), ("a3", "acme", "crm"),
         ("g1", "globex", "search"), ("g2", "globex", "search"))
RULES = {"groups": [{"name": "tenants", "rules": [{
    "alert": "TenantFailing", "expr": "task_success_rate by (tenant_id) [15m] < 0.9",
    "labels": {"severity": "P0"}}]}]}


def _kv(key: str, value) -> KeyValue:
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def _request() -> bytes:
    """One OTLP request: per task a gateway root and, for failures, a tool that timed out."""
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.append(_kv("service.name", "gw"))
    scope = resource.scope_spans.add()
    end = time.time_ns() - 10**9
    for n, (task_id, tenant, tool) in enumerate(TASKS):
        trace = os.urandom(16)
        root = scope.spans.add(trace_id=trace, span_id=(2 * n + 1).to_bytes(8, "big"),
                               name="POST /v1/agent", kind=Span.SPAN_KIND_SERVER,
                               start_time_unix_nano=end - 2 * 10**9, end_time_unix_nano=end)
        root.attributes.extend([_kv("task.id", task_id), _kv("task.type", "chat"),
                                _kv("tenant.id", tenant), _kv("hop.kind", "gateway"),
                                _kv("http.response.status_code", 500 if tool else 200)])
        if tool:
            root.status.CopyFrom(Status(code=Status.STATUS_CODE_ERROR, message="failed"))
            child = scope.spans.add(trace_id=trace, span_id=(2 * n + 2).to_bytes(8, "big"),
                                    parent_span_id=root.span_id, name=f"execute_tool {tool}",
                                    start_time_unix_nano=end - 10**9, end_time_unix_nano=end - 1,
                                    kind=Span.SPAN_KIND_CLIENT)
            child.attributes.extend([_kv("hop.kind", "tool"), _kv("gen_ai.tool.name", tool),
                                     _kv("error.type", "timeout")])
            child.status.CopyFrom(Status(code=Status.STATUS_CODE_ERROR, message="timeout"))
    return request.SerializeToString()


class Api:
    """GET/POST/DELETE the API with a token."""

    def __init__(self, base: str) -> None:
        self.base = base

    def call(self, method: str, token: str | None, path: str, **kwargs) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.request(method, self.base + path, headers=headers, timeout=30, **kwargs)

    def get(self, token: str | None, path: str, **params) -> httpx.Response:
        return self.call("GET", token, path, params=params)


def _until(what, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not (found := what()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return found


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    """A server with two tenants' tasks, an alert per tenant and an incident per tenant."""
    folder: Path = tmp_path_factory.mktemp("tokens")
    (folder / "tokens.yaml").write_text(yaml.safe_dump(
        {"acme": [ACME], "globex": GLOBEX, "*": [OPS]}))
    (folder / "rules.yaml").write_text(yaml.safe_dump(RULES))
    (folder / "agentsla.yaml").write_text(yaml.safe_dump({"alerts": {
        "default_rules": False, "slo_rules": False, "evaluation_interval": "1s",
        "rule_files": [str(folder / "rules.yaml")]}}))
    proc = ServerProcess(folder / "data", extra_args=[
        "--config", str(folder / "agentsla.yaml"), "--api-tokens-file", str(folder / "tokens.yaml"),
        "--api-token", ROOT]).start()
    try:
        httpx.post(proc.traces_url, content=_request(), timeout=30,
                   headers={"Content-Type": "application/x-protobuf"}).raise_for_status()
        client = Api(proc.api_url)
        assert _until(lambda: len(client.get(OPS, "/api/v1/incidents").json()["incidents"]) == 2)
        yield client
    finally:
        proc.stop()


def test_a_tenant_token_sees_only_its_tenants_rates_and_tasks(api):
    sla = api.get(ACME, "/api/v1/sla", window="1h").json()["totals"]
    assert (sla["finished"], sla["success"]) == (3, 2)          # acme's three tasks only
    assert api.get(ACME, "/api/v1/sla", window="1h", tenant_id="acme").json()["totals"] == sla
    tasks = api.get(ACME, "/api/v1/tasks", window="1h").json()["tasks"]
    assert sorted(t["task_id"] for t in tasks) == ["a1", "a2", "a3"]
    for path in ("/api/v1/hops", "/api/v1/root-causes", "/api/v1/budget"):
        assert api.get(GLOBEX, path, window="1h").status_code == 200


def test_a_tenant_token_asking_for_another_tenant_gets_403(api):
    answer = api.get(ACME, "/api/v1/sla", window="1h", tenant_id="globex")
    assert answer.status_code == 403 and "acme" in answer.json()["error"]
    assert api.get(ACME, "/api/v1/tasks", window="1h", tenant_id="globex").status_code == 403


def test_another_tenants_task_and_trace_are_not_found(api):
    assert api.get(ACME, "/api/v1/tasks/g1").status_code == 404
    assert api.get(GLOBEX, "/api/v1/tasks/g1").status_code == 200
    trace = api.get(OPS, "/api/v1/tasks/g1").json()["trace_id"]
    assert api.get(ACME, f"/api/v1/traces/{trace}").status_code == 404
    assert api.get(GLOBEX, f"/api/v1/traces/{trace}").status_code == 200


def test_questions_spanning_every_tenant_need_an_admin_token(api):
    for path in ("/api/v1/findings", "/api/v1/slo", "/metrics"):
        assert api.get(ACME, path).status_code == 403, path
        assert api.get(OPS, path).status_code == 200, path
        assert api.get(ROOT, path).status_code == 200, path


def test_admin_tokens_see_every_tenant(api):
    for token in (OPS, ROOT):
        sla = api.get(token, "/api/v1/sla", window="1h").json()["totals"]
        assert (sla["finished"], sla["success"]) == (5, 2)


def test_no_token_or_a_wrong_one_is_401(api):
    for token in (None, "tok-acm", ACME + "x", ""):
        assert api.get(token, "/api/v1/sla").status_code == 401
        assert api.get(token, "/api/v1/alerts").status_code == 401
    assert api.get(None, "/api/v1/health").status_code == 200


def test_alerts_and_incidents_are_filtered_by_tenant(api):
    def tenants(answer, key):
        return sorted(a["labels"].get("tenant_id") for a in answer[key])
    assert tenants(api.get(OPS, "/api/v1/alerts").json(), "alerts") == ["acme", "globex"]
    mine = api.get(ACME, "/api/v1/alerts").json()
    assert tenants(mine, "alerts") == ["acme"]
    assert {h["labels"].get("tenant_id") for h in mine["history"]} == {"acme"}
    incidents = api.get(OPS, "/api/v1/incidents").json()["incidents"]
    by_tenant = {i["labels"]["tenant_id"]: i["id"] for i in incidents}
    assert [i["id"] for i in api.get(ACME, "/api/v1/incidents").json()["incidents"]] == \
        [by_tenant["acme"]]
    assert api.get(ACME, f"/api/v1/incidents/{by_tenant['acme']}").status_code == 200
    for suffix in ("", "/timeline"):
        assert api.get(ACME, f"/api/v1/incidents/{by_tenant['globex']}{suffix}").status_code == 404
    ack = api.call("POST", ACME, f"/api/v1/incidents/{by_tenant['globex']}/ack", json={"author": "x"})
    assert ack.status_code == 404


def test_silences_are_scoped_to_the_tenant(api):
    ok = api.call("POST", ACME, "/api/v1/silences",
                  json={"matchers": ['tenant_id="acme"', 'alertname="TenantFailing"'],
                        "createdBy": "ana", "comment": "known", "duration": "1h"})
    assert ok.status_code == 201
    unscoped = api.call("POST", ACME, "/api/v1/silences",
                        json={"matchers": ['severity="P0"'], "createdBy": "ana", "comment": "x"})
    assert unscoped.status_code == 403 and 'tenant_id="acme"' in unscoped.json()["error"]
    other = api.call("POST", OPS, "/api/v1/silences",
                     json={"matchers": ['tenant_id="globex"'], "createdBy": "ops", "comment": "x"})
    assert other.status_code == 201
    seen = [s["id"] for s in api.get(ACME, "/api/v1/silences").json()["silences"]]
    assert seen == [ok.json()["silenceID"]]
    assert api.call("DELETE", ACME, f"/api/v1/silences/{other.json()['silenceID']}").status_code == 404
    assert api.call("DELETE", ACME, f"/api/v1/silences/{ok.json()['silenceID']}").status_code == 200


def test_a_bad_tokens_file_stops_the_server_at_start_with_its_reason(tmp_path):
    bad = tmp_path / "tokens.yaml"
    bad.write_text(yaml.safe_dump({"acme": ["same"], "globex": ["same"]}))
    with pytest.raises(RuntimeError, match="also listed for another tenant"):
        ServerProcess(tmp_path / "data", extra_args=["--api-tokens-file", str(bad)]).start()
