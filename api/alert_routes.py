"""HTTP routes of the alert service: /api/v1/alerts, /api/v1/silences (GET, POST, DELETE).

Silence bodies use Alertmanager's field names: matchers (strings such as `severity="P1"`),
startsAt, endsAt (RFC 3339 or unix seconds) or duration, createdBy, comment.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentsla.config import parse_duration
from agentsla.errors import AgentslaError, PermanentError, Unauthorized
from agentsla.api.responses import json_response

NS = 1_000_000_000


def _time(name: str, value: Any) -> float:
    from agentsla.queries.window import parse_time

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return parse_time(name, str(value)) / NS


def _guard(service, handler):
    token = service.config.server.api_token

    async def run(request: Request) -> Response:
        try:
            if token:
                scheme, _, given = request.headers.get("authorization", "").partition(" ")
                if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(),
                                                                         token.encode()):
                    raise Unauthorized("missing or wrong bearer token")
            return await handler(service, request)
        except AgentslaError as exc:
            return json_response({"error": exc.message}, exc.status)
    return run


async def _alerts(service, request: Request) -> Response:
    now = service.clock()
    params = request.query_params
    window = params.get("history", "24h")
    try:
        since = now - parse_duration(window)
    except ValueError as exc:
        raise PermanentError(f"bad history {window!r}: {exc}") from None
    alerts = service.current(now)
    if params.get("state"):
        alerts = [a for a in alerts if a["state"] == params["state"]]
    return json_response({"alerts": alerts, "rules": [r.describe() for r in service.evaluator.rules],
                  "history": service.store.history(since),
                  "groups": service.dispatcher.describe(),
                  "delivery": {"outbox": service.nflog.outbox("pending"),
                               "errors": service.delivery_errors}})


async def read_json_object(request: Request) -> dict[str, Any]:
    """Read a request body that must be one JSON object (an empty body is `{}`)."""
    try:
        body = json.loads(await request.body() or b"{}")
    except ValueError:
        raise PermanentError("the body must be JSON") from None
    if not isinstance(body, dict):
        raise PermanentError("the body must be a JSON object")
    return body


async def _silences(service, request: Request) -> Response:
    now = service.clock()
    if request.method == "GET":
        return json_response({"silences": [s.to_json(now) for s in service.silences.list(now)]})
    body = await read_json_object(request)
    starts = _time("startsAt", body["startsAt"]) if body.get("startsAt") else now
    if body.get("endsAt"):
        ends = _time("endsAt", body["endsAt"])
    else:
        try:
            ends = starts + parse_duration(body.get("duration", "2h"))
        except ValueError as exc:
            raise PermanentError(f"bad duration: {exc}") from None
    matchers = body.get("matchers") or []
    if not isinstance(matchers, list):
        raise PermanentError("matchers must be a list of strings such as severity=\"P1\"")
    silence = service.silences.add([str(m) for m in matchers], starts, ends,
                                   str(body.get("createdBy") or ""), str(body.get("comment") or ""),
                                   now)
    return json_response({"silenceID": silence.id, "silence": silence.to_json(now)}, 201)


async def _silence(service, request: Request) -> Response:
    now = service.clock()
    silence = service.silences.expire(request.path_params["silence_id"], now)
    return json_response({"silence": silence.to_json(now)})


def alert_routes(service) -> list[Route]:
    """Build the routes bound to a service (the incident routes included)."""
    from agentsla.api.incident_routes import incident_routes

    return [Route("/api/v1/alerts", _guard(service, _alerts), methods=["GET"]),
            Route("/api/v1/silences", _guard(service, _silences), methods=["GET", "POST"]),
            Route("/api/v1/silences/{silence_id}", _guard(service, _silence), methods=["DELETE"]),
            *incident_routes(service)]
