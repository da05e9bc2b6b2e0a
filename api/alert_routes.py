"""HTTP routes of the alert service: /api/v1/alerts, /api/v1/silences (GET, POST, DELETE), /-/reload.

Silence bodies use Alertmanager's field names: matchers (strings such as `severity="P1"`),
startsAt, endsAt (RFC 3339 or unix seconds) or duration, createdBy, comment.

Every handler runs in a worker thread (the alert state lives in SQLite, which must not block
the event loop) and reads the service's published `view`, never the dicts a round changes. A
tenant's token sees only alerts, history and silences labelled with its `tenant_id`, and may
only create silences scoped to it (docs/api.md, Security).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Callable

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentsla.alerts.routing.matchers import parse_matcher
from agentsla.api.auth import Principal, Tokens
from agentsla.api.responses import json_response
from agentsla.config import parse_duration
from agentsla.errors import AgentslaError, Forbidden, NotFound, PermanentError

NS = 1_000_000_000
log = logging.getLogger("agentsla.api.alert_routes")


def _time(name: str, value: Any) -> float:
    from agentsla.queries.window import parse_time

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return parse_time(name, str(value)) / NS


@dataclass(frozen=True)
class Call:
    """One request as a handler sees it: the request, who sent it, and its body."""

    request: Request
    principal: Principal
    body: bytes = b""

    def json(self) -> dict[str, Any]:
        """The body as one JSON object (an empty body is `{}`)."""
        try:
            body = json.loads(self.body or b"{}")
        except ValueError:
            raise PermanentError("the body must be JSON") from None
        if not isinstance(body, dict):
            raise PermanentError("the body must be a JSON object")
        return body


Handler = Callable[[Any, Call], Response]


def _guard(service, handler: Handler, tokens: Tokens):
    async def run(request: Request) -> Response:
        try:
            principal = tokens.principal(request.headers.get("authorization", ""))
            body = await request.body() if request.method in ("POST", "DELETE") else b""
            return await run_in_threadpool(handler, service, Call(request, principal, body))
        except AgentslaError as exc:
            return json_response({"error": exc.message}, exc.status)
        except Exception:  # noqa: BLE001 - the edge: log it, answer without a traceback
            log.exception("alert API %s failed", request.url.path)
            return json_response({"error": "internal error; see the agentsla server log"}, 500)
    return run


def _alerts(service, call: Call) -> Response:
    now = service.clock()
    params, who = call.request.query_params, call.principal
    window = params.get("history", "24h")
    try:
        since = now - parse_duration(window)
    except ValueError as exc:
        raise PermanentError(f"bad history {window!r}: {exc}") from None
    alerts = [a for a in service.current(now) if who.sees(a["labels"])]
    if params.get("state"):
        alerts = [a for a in alerts if a["state"] == params["state"]]
    view = service.view
    admin = who.admin  # rules, groups and the outbox span every tenant
    return json_response({
        "alerts": alerts, "rules": list(view.rules) if admin else [],
        "history": [h for h in service.store.history(since) if who.sees(h["labels"])],
        "groups": list(view.groups) if admin else [],
        "delivery": {"outbox": service.nflog.outbox("pending") if admin else [],
                     "errors": dict(service.delivery_errors) if admin else {}},
        "reload": service.last_reload.to_json() if service.last_reload else None})


def _silence_tenant(matchers: list[str]) -> str | None:
    """The tenant a silence is scoped to: its `tenant_id="..."` equality matcher, if any."""
    for text in matchers:
        try:
            matcher = parse_matcher(text)
        except ValueError:
            continue  # Silences.add reports bad matchers precisely
        if matcher.label == "tenant_id" and matcher.op == "=":
            return matcher.value
    return None


def _visible(who: Principal, silence_json: dict) -> bool:
    return who.admin or _silence_tenant(silence_json["matchers"]) == who.tenant


def _silences(service, call: Call) -> Response:
    now, who = service.clock(), call.principal
    if call.request.method == "GET":
        found = [s.to_json(now) for s in service.silences.list(now)]
        return json_response({"silences": [s for s in found if _visible(who, s)]})
    body = call.json()
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
    if not who.admin and _silence_tenant([str(m) for m in matchers]) != who.tenant:
        raise Forbidden(f"a silence made with this token must carry the matcher "
                        f"tenant_id=\"{who.tenant}\"")
    silence = service.silences.add([str(m) for m in matchers], starts, ends,
                                   str(body.get("createdBy") or ""), str(body.get("comment") or ""),
                                   now)
    return json_response({"silenceID": silence.id, "silence": silence.to_json(now)}, 201)


def _silence(service, call: Call) -> Response:
    now, silence_id = service.clock(), call.request.path_params["silence_id"]
    if not _visible(call.principal, service.silences.get(silence_id).to_json(now)):
        raise NotFound(f"unknown silence {silence_id!r}")
    silence = service.silences.expire(silence_id, now)
    return json_response({"silence": silence.to_json(now)})


def _reload_route(service, tokens: Tokens):
    async def reload(request: Request) -> Response:
        """POST /-/reload: read the rule and routing files again (admin token)."""
        try:
            tokens.principal(request.headers.get("authorization", "")).require_admin("reload")
        except AgentslaError as exc:
            return json_response({"error": exc.message}, exc.status)
        result = await service.reload()
        # a bad file is bad input (400) and the running config stays; the body says why
        return json_response(result.to_json(), 200 if result.ok else 400)
    return Route("/-/reload", reload, methods=["POST"])


def alert_routes(service) -> list[Route]:
    """Build the routes bound to a service (the incident routes included)."""
    from agentsla.api.incident_routes import incident_routes

    tokens = Tokens.from_config(service.config.server)
    return [Route("/api/v1/alerts", _guard(service, _alerts, tokens), methods=["GET"]),
            Route("/api/v1/silences", _guard(service, _silences, tokens), methods=["GET", "POST"]),
            Route("/api/v1/silences/{silence_id}", _guard(service, _silence, tokens),
                  methods=["DELETE"]),
            _reload_route(service, tokens), *incident_routes(service, tokens)]
