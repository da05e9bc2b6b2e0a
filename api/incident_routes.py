"""HTTP routes of incidents: list, show, timeline export, acknowledge, notes.

    GET  /api/v1/incidents[?state=open|resolved&from=&to=&limit=]
    GET  /api/v1/incidents/{incident_id}                 the agentsla.incident/1 document
    GET  /api/v1/incidents/{incident_id}/timeline?format=json|csv|md|html   a download
    POST /api/v1/incidents/{incident_id}/ack             {"author": "ana"}
    POST /api/v1/incidents/{incident_id}/notes           {"kind": "note|change|mitigated",
                                                          "author", "text", "at"?, "labels"?}
"""

from __future__ import annotations


from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentsla.api.alert_routes import _guard, _time, read_json_object
from agentsla.api.responses import json_response
from agentsla.errors import PermanentError

STATES = ("open", "resolved")
_LIST_PARAMS = frozenset({"state", "from", "to", "limit"})


def _check_params(request: Request, allowed: frozenset[str]) -> None:
    unknown = sorted(set(request.query_params) - allowed)
    if unknown:
        raise PermanentError(f"unknown parameter {unknown[0]!r} for {request.url.path}; "
                             f"expected: {', '.join(sorted(allowed)) or 'none'}")


async def _list(service, request: Request) -> Response:
    from agentsla.alerts.incidents.report import summary

    _check_params(request, _LIST_PARAMS)
    params = request.query_params
    state = params.get("state") or None
    if state is not None and state not in STATES:
        raise PermanentError(f"bad state {state!r}: expected one of {', '.join(STATES)}")
    since = _time("from", params["from"]) if params.get("from") else None
    until = _time("to", params["to"]) if params.get("to") else None
    try:
        limit = int(params.get("limit", "100"))
    except ValueError:
        raise PermanentError(f"bad limit {params['limit']!r}: expected a whole number") from None
    if not 1 <= limit <= 1000:
        raise PermanentError(f"bad limit {limit}: expected 1 to 1000")
    store = service.incidents.store
    found = store.list(state, since, until, limit)
    return json_response({"incidents": [summary(store, i) for i in found]})


async def _show(service, request: Request) -> Response:
    from agentsla.alerts.incidents.report import document

    _check_params(request, frozenset())
    return json_response(document(service.incidents.store, request.path_params["incident_id"],
                          service.clock()))


async def _timeline(service, request: Request) -> Response:
    from agentsla.alerts.incidents.export import render
    from agentsla.alerts.incidents.report import document

    _check_params(request, frozenset({"format"}))
    fmt = request.query_params.get("format", "json")
    doc = document(service.incidents.store, request.path_params["incident_id"], service.clock())
    out = render(doc, fmt)
    disposition = "inline" if fmt == "json" else "attachment"
    return Response(out.text, 200, media_type=out.media_type,
                    headers={"Content-Disposition": f'{disposition}; filename="{out.filename}"',
                             "X-Content-Type-Options": "nosniff"})


async def _ack(service, request: Request) -> Response:
    from agentsla.alerts.incidents.report import summary

    body = await read_json_object(request)
    incident_id = request.path_params["incident_id"]
    service.incidents.acknowledge(incident_id, str(body.get("author") or ""), service.clock(),
                                  source=str(body.get("source") or "api"))
    store = service.incidents.store
    return json_response({"incident": summary(store, store.get(incident_id))})


async def _note(service, request: Request) -> Response:
    body = await read_json_object(request)
    labels = body.get("labels") or {}
    if not isinstance(labels, dict):
        raise PermanentError("labels must be an object of strings")
    at = _time("at", body["at"]) if body.get("at") not in (None, "") else None
    incident_id = request.path_params["incident_id"]
    from agentsla.alerts.incidents.report import entry_json

    entry_id = service.incidents.note(incident_id, str(body.get("kind") or "note"),
                                      str(body.get("author") or ""), str(body.get("text") or ""),
                                      service.clock(), at,
                                      {str(k): str(v) for k, v in labels.items()},
                                      source=str(body.get("source") or "api"))
    added = next(e for e in service.incidents.store.entries(incident_id) if e.id == entry_id)
    return json_response({"entry": entry_json(added)}, 201)


def incident_routes(service) -> list[Route]:
    """Build the incident routes bound to a service."""
    return [
        Route("/api/v1/incidents", _guard(service, _list), methods=["GET"]),
        Route("/api/v1/incidents/{incident_id}", _guard(service, _show), methods=["GET"]),
        Route("/api/v1/incidents/{incident_id}/timeline", _guard(service, _timeline),
              methods=["GET"]),
        Route("/api/v1/incidents/{incident_id}/ack", _guard(service, _ack), methods=["POST"]),
        Route("/api/v1/incidents/{incident_id}/notes", _guard(service, _note), methods=["POST"]),
    ]
