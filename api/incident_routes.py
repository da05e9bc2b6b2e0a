"""HTTP routes of incidents: list, show, timeline export, acknowledge, notes.

    GET  /api/v1/incidents[?state=open|resolved&from=&to=&limit=]
    GET  /api/v1/incidents/{incident_id}                 the agentsla.incident/2 document
    GET  /api/v1/incidents/{incident_id}/timeline?format=json|csv|md|html   a download
    POST /api/v1/incidents/{incident_id}/ack             {"author": "ana"}
    POST /api/v1/incidents/{incident_id}/notes           {"kind": "note|change|mitigated",
                                                          "author", "text", "at"?, "labels"?}

A tenant's token lists and opens only incidents whose scope labels carry its `tenant_id`; any
other incident answers 404, as if it did not exist.
"""

from __future__ import annotations


from starlette.responses import Response
from starlette.routing import Route

from agentsla.api.alert_routes import Call, _guard, _time
from agentsla.api.auth import Tokens
from agentsla.api.responses import json_response
from agentsla.errors import NotFound, PermanentError

STATES = ("open", "resolved")
_LIST_PARAMS = frozenset({"state", "from", "to", "limit"})


def _check_params(call: Call, allowed: frozenset[str]) -> None:
    unknown = sorted(set(call.request.query_params) - allowed)
    if unknown:
        raise PermanentError(f"unknown parameter {unknown[0]!r} for {call.request.url.path}; "
                             f"expected: {', '.join(sorted(allowed)) or 'none'}")


def _incident_id(service, call: Call) -> str:
    """The path's incident id, once the caller may see that incident (else 404)."""
    incident_id = call.request.path_params["incident_id"]
    if not call.principal.admin:
        incident = service.incidents.store.get(incident_id)
        if not call.principal.sees(incident.labels):
            raise NotFound(f"unknown incident {incident_id!r}")
    return incident_id


def _list(service, call: Call) -> Response:
    from agentsla.alerts.incidents.report import summary

    _check_params(call, _LIST_PARAMS)
    params = call.request.query_params
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
    # a tenant's incidents are filtered here, so its limit counts after the filter (-1: all)
    found = [i for i in store.list(state, since, until, limit if call.principal.admin else -1)
             if call.principal.sees(i.labels)][:limit]
    return json_response({"incidents": [summary(store, i) for i in found]})


def _show(service, call: Call) -> Response:
    from agentsla.alerts.incidents.report import document

    _check_params(call, frozenset())
    return json_response(document(service.incidents.store, _incident_id(service, call),
                                  service.clock()))


def _timeline(service, call: Call) -> Response:
    from agentsla.alerts.incidents.export import render
    from agentsla.alerts.incidents.report import document

    _check_params(call, frozenset({"format"}))
    fmt = call.request.query_params.get("format", "json")
    doc = document(service.incidents.store, _incident_id(service, call), service.clock())
    out = render(doc, fmt)
    disposition = "inline" if fmt == "json" else "attachment"
    return Response(out.text, 200, media_type=out.media_type,
                    headers={"Content-Disposition": f'{disposition}; filename="{out.filename}"',
                             "X-Content-Type-Options": "nosniff"})


def _ack(service, call: Call) -> Response:
    from agentsla.alerts.incidents.report import summary

    body = call.json()
    incident_id = _incident_id(service, call)
    service.incidents.acknowledge(incident_id, str(body.get("author") or ""), service.clock(),
                                  source=str(body.get("source") or "api"))
    store = service.incidents.store
    return json_response({"incident": summary(store, store.get(incident_id))})


def _note(service, call: Call) -> Response:
    body = call.json()
    labels = body.get("labels") or {}
    if not isinstance(labels, dict):
        raise PermanentError("labels must be an object of strings")
    at = _time("at", body["at"]) if body.get("at") not in (None, "") else None
    incident_id = _incident_id(service, call)
    from agentsla.alerts.incidents.report import entry_json

    entry_id = service.incidents.note(incident_id, str(body.get("kind") or "note"),
                                      str(body.get("author") or ""), str(body.get("text") or ""),
                                      service.clock(), at,
                                      {str(k): str(v) for k, v in labels.items()},
                                      source=str(body.get("source") or "api"))
    added = next(e for e in service.incidents.store.entries(incident_id) if e.id == entry_id)
    return json_response({"entry": entry_json(added)}, 201)


def incident_routes(service, tokens: Tokens) -> list[Route]:
    """Build the incident routes bound to a service."""
    return [
        Route("/api/v1/incidents", _guard(service, _list, tokens), methods=["GET"]),
        Route("/api/v1/incidents/{incident_id}", _guard(service, _show, tokens), methods=["GET"]),
        Route("/api/v1/incidents/{incident_id}/timeline", _guard(service, _timeline, tokens),
              methods=["GET"]),
        Route("/api/v1/incidents/{incident_id}/ack", _guard(service, _ack, tokens),
              methods=["POST"]),
        Route("/api/v1/incidents/{incident_id}/notes", _guard(service, _note, tokens),
              methods=["POST"]),
    ]
