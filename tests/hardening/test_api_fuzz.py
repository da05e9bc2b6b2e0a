"""Query API under generated and hostile parameters: schemathesis over its OpenAPI document.

Schemathesis reads the document the server serves (api/openapi.py) and generates requests
for every operation, positive and negative; no answer may be a 5xx. Filter and path values built
to inject SQL are either rejected (400) or bound as parameters (200/404, matching nothing), and
the stored data is intact afterwards.
"""

from __future__ import annotations

import urllib.parse

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentload import PROTO, agent_task, stored_spans
from agentsla.api.openapi import OPENAPI
from serverproc import ServerProcess

SEEDED = [agent_task(5, i, tag=0xD0) for i in range(12)]
INJECTIONS = ["'; drop table spans; --", "' or '1'='1", "\"; delete from tasks; --",
              "x') union select * from span_store --", "1; checkpoint", "%27%3B", "\\'",
              "tool\u0000", "\u2019 or 1=1 --", "ﬀ'ˈ", "$task_type", ":task_type", "?",
              "' || (select version()) || '", "a" * 5000]
FILTERS = ["task_type", "tenant_id", "outcome", "hop_kind", "ffh_kind", "ffh_name", "group_by"]
ROUTES_WITH = {"/api/v1/tasks": ["task_type", "tenant_id", "outcome", "ffh_kind", "ffh_name"],
               "/api/v1/sla": ["task_type", "tenant_id", "group_by"],
               "/api/v1/hops": ["hop_kind", "task_type", "tenant_id"],
               "/api/v1/root-causes": ["task_type", "tenant_id"],
               "/api/v1/budget": ["task_type", "tenant_id"],
               "/api/v1/slo": ["task_type"]}

schema = schemathesis.openapi.from_dict(OPENAPI)


@pytest.fixture(scope="module")
def api_server(tmp_path_factory):
    server = ServerProcess(tmp_path_factory.mktemp("api")).start()
    with httpx.Client(timeout=30) as client:
        for task in SEEDED:
            assert client.post(server.traces_url, content=task.body,
                               headers=PROTO).status_code == 200
    yield server
    server.stop()
    assert "Traceback" not in server.log, server.log[-3000:]


def _intact(server: ServerProcess) -> None:
    with httpx.Client(timeout=30) as client:
        for task in SEEDED:
            assert len(stored_spans(client, server.api_url, task.trace_id)) == len(task.spans)
            assert client.get(f"{server.api_url}/api/v1/tasks/{task.trace_id}").json()[
                "span_count"] == len(task.spans)


def test_served_document_is_the_one_tested(api_server: ServerProcess) -> None:
    assert api_server.api("/api/v1/openapi.json").json() == OPENAPI


@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_operation_answers_5xx(case, api_server: ServerProcess) -> None:
    response = case.call(base_url=api_server.api_url, timeout=30)
    assert response.status_code < 500, (case.method, case.formatted_path, case.query,
                                        response.status_code, response.text[:300])
    assert response.status_code in (200, 400, 404, 405), response.text[:300]


@pytest.mark.parametrize("path,param", [(p, f) for p, fs in ROUTES_WITH.items() for f in fs])
def test_sql_injection_in_filters_is_bound_or_rejected(api_server: ServerProcess, path: str,
                                                       param: str) -> None:
    with httpx.Client(timeout=30) as client:
        for value in INJECTIONS:
            response = client.get(f"{api_server.api_url}{path}",
                                  params={param: value, "window": "30d"})
            assert response.status_code in (200, 400), (value, response.text[:300])
            if response.status_code == 200 and path == "/api/v1/tasks":
                assert response.json()["tasks"] == []  # bound: matches no task
    _intact(api_server)


def test_sql_injection_in_path_ids_is_bound(api_server: ServerProcess) -> None:
    with httpx.Client(timeout=30) as client:
        for value in INJECTIONS:
            for route in ("tasks", "traces"):
                quoted = urllib.parse.quote(value, safe="")
                response = client.get(f"{api_server.api_url}/api/v1/{route}/{quoted}")
                assert response.status_code in (400, 404), (route, value, response.text[:300])
    _intact(api_server)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(path=st.sampled_from(list(ROUTES_WITH)), data=st.data())
def test_generated_filter_values_never_fail(api_server: ServerProcess, path: str, data) -> None:
    params = {name: data.draw(st.one_of(st.text(max_size=30), st.sampled_from(INJECTIONS)),
                              label=name)
              for name in data.draw(st.sets(st.sampled_from(ROUTES_WITH[path])), label="names")}
    response = httpx.get(f"{api_server.api_url}{path}", params=params, timeout=30)
    assert response.status_code in (200, 400), (params, response.text[:300])
