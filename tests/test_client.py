"""ApiClient: parameters sent, server errors carried through, an unreachable server explained."""

from __future__ import annotations

import httpx
import pytest

from agentsla.client import ApiClient
from agentsla.errors import AgentslaError, NotFound, PermanentError, Unauthorized


def _client(handler, token=None) -> ApiClient:
    return ApiClient("http://api.test/", token=token, transport=httpx.MockTransport(handler))


def test_sends_params_and_token_and_returns_json():
    seen = {}

    def handler(request: httpx.Request) -> httpx.Response:
        seen.update(url=str(request.url), auth=request.headers.get("authorization"))
        return httpx.Response(200, json={"totals": {"finished": 3}})

    with _client(handler, token="t0k") as client:
        body = client.sla(window="15m", group_by="task_type", task_type=None)
    assert body == {"totals": {"finished": 3}}
    assert seen == {"url": "http://api.test/api/v1/sla?window=15m&group_by=task_type",
                    "auth": "Bearer t0k"}


def test_task_ids_are_quoted_into_the_path():
    urls = []

    def handler(request: httpx.Request) -> httpx.Response:
        urls.append(request.url.raw_path.decode())
        return httpx.Response(200, json={})

    _client(handler).task("a/b c")
    assert urls == ["/api/v1/tasks/a%2Fb%20c"]


@pytest.mark.parametrize("status, body, cls, message", [
    (400, {"error": "bad window 'soon'"}, PermanentError, "bad window 'soon' (HTTP 400)"),
    (401, {"error": "missing or wrong bearer token"}, Unauthorized, "bearer token"),
    (404, {"error": "unknown task 'x'"}, NotFound, "unknown task 'x' (HTTP 404)"),
    (500, {"error": "internal error"}, AgentslaError, "internal error (HTTP 500)"),
    (502, "<html>bad gateway</html>", AgentslaError, "<html>bad gateway</html> (HTTP 502)"),
])
def test_server_errors_carry_the_message(status, body, cls, message):
    def handler(request: httpx.Request) -> httpx.Response:
        if isinstance(body, dict):
            return httpx.Response(status, json=body)
        return httpx.Response(status, text=body)

    with pytest.raises(cls) as info:
        _client(handler).tasks(limit=5)
    assert message in info.value.message


def test_unreachable_server_says_so():
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("Connection refused", request=request)

    with pytest.raises(AgentslaError) as info:
        _client(handler).health()
    assert info.value.message.startswith("cannot reach the agentsla API at http://api.test: ")
    assert "is `agentsla serve` running?" in info.value.message


def test_real_closed_port_is_explained():
    client = ApiClient("http://127.0.0.1:9", timeout=2.0)  # discard port: nothing listens
    with pytest.raises(AgentslaError, match="cannot reach the agentsla API at http://127.0.0.1:9"):
        client.health()
    client.close()


def test_metrics_returns_text():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="# HELP x y\n")

    assert _client(handler).metrics() == "# HELP x y\n"
