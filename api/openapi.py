"""The OpenAPI 3.1 description of the query API, kept as data.

The API refuses query parameters this document does not list for a route, so the document and
the behaviour cannot drift apart; tests check that every route is described.
"""

from __future__ import annotations

from agentsla.contract import BLAMED_OUTCOMES, HOP_KINDS, OUTCOMES
from agentsla.queries._sql import DIMENSIONS
from agentsla.queries.findings import route as findings_route
from agentsla.queries.sla import RATED_OUTCOMES
from agentsla.queries.slo import BURN_WINDOWS


def _param(name: str, description: str, schema: dict | None = None, where: str = "query",
           required: bool = False) -> dict:
    return {"name": name, "in": where, "required": required or where == "path",
            "description": description, "schema": schema or {"type": "string"}}


FROM = _param("from", "Window start: RFC 3339 (2024-05-01T12:00:00Z) or unix seconds. "
                      "Not together with `window`.")
TO = _param("to", "Window end (exclusive): RFC 3339 or unix seconds. Default: now.")
WINDOW = _param("window", "Window length ending at `to`, e.g. 15m, 1h, 7d. Default 1h.")
STEP = _param("step", "Bucket length of the time series, e.g. 1m; at most 2000 buckets.")
TASK_TYPE = _param("task_type", "Only tasks of this type.")
TENANT_ID = _param("tenant_id", "Only tasks of this tenant.")
SERVICE_NAME = _param("service_name", "Only tasks whose root span is of this service "
                                      "(`service.name`).")
GROUP_BY = _param("group_by", "Also report per value of this dimension.",
                  {"type": "string", "enum": list(DIMENSIONS)})
HOP_KIND = _param("hop_kind", "Only hops of this kind.", {"type": "string", "enum": list(HOP_KINDS)})
OUTCOME = _param("outcome", "Only tasks with this outcome.",
                 {"type": "string", "enum": list(OUTCOMES)})
FFH_KIND = _param("ffh_kind", "Only tasks whose first failing hop has this kind.")
FFH_NAME = _param("ffh_name", "Only tasks whose first failing hop has this name.")


def _limit(default: int, maximum: int) -> dict:
    return _param("limit", f"Most rows returned (default {default}, at most {maximum}).",
                  {"type": "integer", "minimum": 1, "maximum": maximum, "default": default})


#: Hops in the /hops series: the busiest by calls (the route's `limit` bounds the table).
SERIES_LIMIT = _param("series_limit", "With `step`: the series holds the hops with the most "
                                      "calls in the window, at most this many (default 20, at "
                                      "most 100).",
                      {"type": "integer", "minimum": 1, "maximum": 100, "default": 20})

NUM = {"type": ["number", "null"]}
INT = {"type": "integer"}
STR = {"type": ["string", "null"]}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _obj(properties: dict, **extra) -> dict:
    return {"type": "object", "properties": properties, **extra}


def _list(item: dict) -> dict:
    return {"type": "array", "items": item}


_SLA_ROW = _obj({
    "finished": INT, **{o: INT for o in RATED_OUTCOMES},
    **{f"{o}_rate": NUM for o in RATED_OUTCOMES},
    "cancelled": INT, "in_progress": INT, "gateway_answered": INT, "gateway_ok": INT,
    "gateway_success_rate": NUM, "latency_p50_ms": NUM, "latency_p95_ms": NUM,
    "latency_p99_ms": NUM, "budget_used_p50": NUM, "budget_used_p95": NUM},
    description="Rates are over `finished` (cancelled excluded); null when nothing finished.")

_SPAN = _obj({"trace_id": STR, "span_id": STR, "parent_span_id": STR, "task_id": STR,
              "name": STR, "hop_kind": STR, "hop_name": STR, "start_ns": INT, "end_ns": INT,
              "start": STR, "end": STR, "duration_ms": NUM, "status_code": STR,
              "error_type": STR, "attributes": {"type": "object"}, "events": {"type": "array"},
              "links": {"type": "array"}, "resource": {"type": "object"},
              "children": _list(_ref("Span"))},
             description="Every column of the `spans` view, JSON columns parsed, children nested.")

_TASK = _obj({"task_id": STR, "trace_id": STR, "task_type": STR, "tenant_id": STR,
              "outcome": {"type": "string", "enum": list(OUTCOMES)}, "finished": {"type": "boolean"},
              "start_ns": INT, "end_ns": {"type": ["integer", "null"]}, "start": STR, "end": STR,
              "duration_ms": NUM, "budget_total_ms": NUM, "budget_used_ratio": NUM,
              "ffh_kind": STR, "ffh_name": STR, "ffh_reason": STR},
             description="Every column of the `tasks` view plus `start` and `end` (RFC 3339).")

SCHEMAS = {
    "Error": _obj({"error": {"type": "string"}}, required=["error"]),
    "Window": _obj({"from_ns": INT, "to_ns": INT, "from": STR, "to": STR, "step_s": NUM}),
    "SlaRow": _SLA_ROW,
    "Sla": _obj({"window": _ref("Window"), "totals": _ref("SlaRow"), "group_by": STR,
                 "groups": {"type": ["array", "null"], "items": _ref("SlaRow")},
                 "series": {"type": ["array", "null"], "items": _ref("SlaRow")}}),
    "Hop": _obj({"hop_kind": STR, "hop_name": STR, "calls": INT, "logical_calls": INT,
                 "attempts_per_call": NUM, "errors": INT, "error_rate": NUM, "timeouts": INT,
                 "timeout_rate": NUM, "rate_limited": INT, "rate_limited_rate": NUM,
                 "circuit_open": INT, "circuit_open_rate": NUM, "latency_p50_ms": NUM,
                 "latency_p95_ms": NUM, "latency_p99_ms": NUM, "ttft_p50_ms": NUM,
                 "ttft_p95_ms": NUM, "input_tokens": INT, "output_tokens": INT}),
    "HopPoint": _obj({"bucket_ns": INT, "bucket": STR, "hop_kind": STR, "hop_name": STR,
                      "calls": INT, "error_rate": NUM, "timeout_rate": NUM,
                      "rate_limited_rate": NUM, "latency_p95_ms": NUM},
                     description="One hop in one bucket (spans by end); buckets without calls "
                                 "have no row."),
    "RootCause": _obj({"ffh_kind": STR, "ffh_name": STR, "ffh_reason": STR, "tasks": INT,
                       "share": NUM, "cumulative_share": NUM, "seconds_lost": NUM,
                       **{o: INT for o in BLAMED_OUTCOMES},
                       "example_task_ids": _list({"type": "string"})}),
    "RootCausePoint": _obj({"bucket_ns": INT, "bucket": STR, "ffh_kind": STR, "ffh_name": STR,
                            "ffh_reason": STR, "tasks": INT, "seconds_lost": NUM, "share": NUM}),
    "Budget": _obj({"window": _ref("Window"), "tasks": INT, "tasks_with_budget": INT,
                    "avg_duration_ms": NUM, "avg_budget_ms": NUM, "unused_budget_share": NUM,
                    "by_hop_kind": _list(_obj({
                        "hop_kind": STR, "tasks_with_hop": INT, "self_ms": NUM,
                        "avg_ms_per_task": NUM, "share_of_duration": NUM,
                        "share_of_budget": NUM}))}),
    "Slo": _obj({"task_type": STR, "objective": NUM, "period_s": NUM,
                 "degraded_is_good": {"type": "boolean"}, "good": INT, "bad": INT,
                 "bad_fraction": NUM, "error_budget_remaining": NUM,
                 "burn_rates": _obj({label: NUM for label, _ in BURN_WINDOWS}),
                 "windows": _obj({label: _obj({"good": INT, "bad": INT})
                                  for label, _ in BURN_WINDOWS})}),
    "Task": _TASK,
    "Span": _SPAN,
    "TaskDetail": {"allOf": [_ref("Task"), _obj({
        "first_failing_hop": {"oneOf": [{"type": "null"}, _obj({
            "kind": STR, "name": STR, "reason": STR, "span_id": STR, "detail_span_id": STR})]},
        "spans": _list(_ref("Span")), "spans_truncated": {"type": "boolean"}})]},
    "Trace": _obj({"trace_id": {"type": "string"}, "task_ids": _list({"type": "string"}),
                   "spans": _list(_ref("Span")), "spans_truncated": {"type": "boolean"}}),
}


def _get(summary: str, params: list[dict], schema: dict | None, media: str = "application/json",
         not_found: bool = False, auth: bool = True) -> dict:
    responses = {
        "200": {"description": "OK", "content": {media: {"schema": schema or {"type": "string"}}}},
        "400": {"description": "Bad parameter", "content": {"application/json": {"schema": _ref("Error")}}},
    }
    if auth:
        responses["401"] = {"description": "Missing or wrong bearer token (when one is set)",
                            "content": {"application/json": {"schema": _ref("Error")}}}
        responses["403"] = {"description": "A tenant's token asked beyond its tenant",
                            "content": {"application/json": {"schema": _ref("Error")}}}
    if not_found:
        responses["404"] = {"description": "Unknown id",
                            "content": {"application/json": {"schema": _ref("Error")}}}
    op = {"summary": summary, "parameters": params, "responses": responses}
    if not auth:
        op["security"] = []
    return {"get": op}


_INCIDENT_ID = _param("incident_id", "The incident id (INC-...).", where="path")


def _exports(item: dict) -> dict:
    item["get"]["responses"]["200"]["content"] = {
        media: {"schema": {"type": "object"} if media == "application/json" else {"type": "string"}}
        for media in ("application/json", "text/csv", "text/markdown", "text/html")}
    return item


def _post(summary: str, body: dict, ok: str) -> dict:
    return {"post": {"summary": summary, "parameters": [_INCIDENT_ID],
                     "requestBody": {"content": {"application/json": {"schema": body}}},
                     "responses": {ok: {"description": "Done",
                                        "content": {"application/json": {"schema": {"type": "object"}}}},
                                   "400": {"description": "Bad body",
                                           "content": {"application/json": {"schema": _ref("Error")}}},
                                   "404": {"description": "Unknown incident",
                                           "content": {"application/json": {"schema": _ref("Error")}}}}}}


def _window_result(name: str, items: dict, **more) -> dict:
    return _obj({"window": _ref("Window"), name: items, **more})


PATHS = {
    "/api/v1/health": _get("Liveness and ingest state (never needs a token).", [],
                           _obj({"status": {"type": "string"}}), auth=False),
    "/api/v1/sla": _get("Task outcome rates, gateway success, latency and budget use.",
                        [FROM, TO, WINDOW, STEP, GROUP_BY, TASK_TYPE, TENANT_ID, SERVICE_NAME],
                        _ref("Sla")),
    "/api/v1/hops": _get("Per-hop calls, attempts per logical call, error/timeout/429 rates, "
                         "latency; with `step`, a series of the busiest hops.",
                         [FROM, TO, WINDOW, STEP, HOP_KIND, TASK_TYPE, TENANT_ID, SERVICE_NAME,
                          _limit(500, 5000), SERIES_LIMIT],
                         _window_result("hops", _list(_ref("Hop")), series={
                             "type": ["array", "null"], "items": _ref("HopPoint")})),
    "/api/v1/root-causes": _get(
        "Pareto of first failing hops over failed, degraded, budget-exhausted and rejected tasks.",
        [FROM, TO, WINDOW, STEP, TASK_TYPE, TENANT_ID, SERVICE_NAME, _limit(50, 1000)],
        _window_result("root_causes", _list(_ref("RootCause")), blamed_tasks=INT,
                       series={"type": ["array", "null"], "items": _ref("RootCausePoint")})),
    "/api/v1/budget": _get("Where the budget went: self time by hop kind.",
                           [FROM, TO, WINDOW, TASK_TYPE, TENANT_ID, SERVICE_NAME],
                           _ref("Budget")),
    "/api/v1/findings": _get("Timeout-budget findings whose evidence ended in the window "
                             "widened to whole minutes (the answer's `window`), or what is "
                             "wrong with one task (task_id, trace_id).",
                             [FROM, TO, WINDOW, findings_route.KIND_PARAM,
                              *findings_route.TASK_PARAMS],
                             _window_result("findings", _list(findings_route.FINDING_SCHEMA),
                                            kind=STR, task_id=STR, trace_id=STR),
                             not_found=True),
    "/api/v1/slo": _get("Per task type: SLO, error budget remaining, burn rates ending at `to`.",
                        [TO, TASK_TYPE], _obj({"at_ns": INT, "at": STR, "slos": _list(_ref("Slo"))})),
    "/api/v1/tasks": _get("Tasks in the window, newest first (in-progress tasks by start).",
                          [FROM, TO, WINDOW, OUTCOME, TASK_TYPE, TENANT_ID, SERVICE_NAME,
                           FFH_KIND, FFH_NAME, _limit(100, 1000)],
                          _window_result("tasks", _list(_ref("Task")))),
    "/api/v1/tasks/{task_id}": _get("One task: outcome, first failing hop and span tree.",
                                    [_param("task_id", "The task id.", where="path")],
                                    _ref("TaskDetail"), not_found=True),
    "/api/v1/traces/{trace_id}": _get("One trace as a span tree.",
                                      [_param("trace_id", "32 hex digits.", where="path")],
                                      _ref("Trace"), not_found=True),
    # Served by the alert service (api/alert_routes.py), in the same app.
    "/api/v1/alerts": _get("Current alerts, rule health, history and delivery state.",
                           [_param("state", "Only alerts in this state (pending, firing, "
                                   "resolved)."),
                            _param("history", "How far back the history goes, default 24h.")],
                           {"type": "object"}),
    "/api/v1/silences": {
        **_get("Silences, active and expired.", [], {"type": "object"}),
        "post": {"summary": "Create a silence: matchers, createdBy, comment, and endsAt or "
                            "duration (default 2h).",
                 "requestBody": {"content": {"application/json": {"schema": _obj({
                     "matchers": _list(_obj({"name": STR, "value": STR,
                                             "isRegex": {"type": "boolean"},
                                             "isEqual": {"type": "boolean"}})),
                     "createdBy": STR, "comment": STR, "startsAt": STR, "endsAt": STR,
                     "duration": STR})}}},
                 "responses": {"201": {"description": "The silence and its id"},
                               "400": {"description": "Bad silence"}}},
    },
    "/api/v1/silences/{silence_id}": {
        "delete": {"summary": "Expire a silence.",
                   "parameters": [_param("silence_id", "The silence id.", where="path")],
                   "responses": {"200": {"description": "Expired"},
                                 "404": {"description": "Unknown silence"}}},
    },
    "/-/reload": {
        "post": {"summary": "Read the rule and routing files again (admin token); a bad file "
                            "keeps the running config (docs/alerts.md, Reloading).",
                 "responses": {"200": {"description": "Reloaded: {status, at, rules}"},
                               "400": {"description": "A bad file: {status: error, error}"},
                               "403": {"description": "Not an admin token"}}},
    },
    # Incidents (api/incident_routes.py; docs/incidents.md).
    "/api/v1/incidents": _get("Incidents, newest first; `from`/`to` keep those overlapping "
                              "the window.",
                              [_param("state", "Only incidents in this state.",
                                      {"type": "string", "enum": ["open", "resolved"]}),
                               FROM, TO, _limit(100, 1000)],
                              _obj({"incidents": _list({"type": "object"})})),
    "/api/v1/incidents/{incident_id}": _get(
        "One incident as an `agentsla.incident/2` document: lifecycle, alerts, impact, root "
        "causes, action items, series and timeline.", [_INCIDENT_ID], {"type": "object"},
        not_found=True),
    "/api/v1/incidents/{incident_id}/timeline": _exports(_get(
        "Export an incident: JSON document, CSV timeline rows, Markdown post-mortem or a "
        "self-contained HTML report (Content-Disposition names the file).",
        [_INCIDENT_ID, _param("format", "Export format (default json).",
                              {"type": "string", "enum": ["json", "csv", "md", "html"]})],
        None, not_found=True)),
    "/api/v1/incidents/{incident_id}/ack": _post(
        "Acknowledge an incident (the first acknowledgement counts).",
        _obj({"author": STR}), "200"),
    "/api/v1/incidents/{incident_id}/notes": _post(
        "Add a note, a change marker (deploy, model switch, config change) or a mitigation.",
        _obj({"kind": {"type": "string", "enum": ["note", "change", "mitigated"]},
              "author": STR, "text": {"type": "string"},
              "at": {"type": ["string", "number", "null"]},
              "labels": {"type": "object", "additionalProperties": {"type": "string"}}},
             required=["text"]), "201"),
    "/api/v1/openapi.json": _get("This document.", [], {"type": "object"}),
    "/metrics": _get("Prometheus counters, histograms and gauges: text format 0.0.4, or "
                     "OpenMetrics (with exemplars) when Accept asks for "
                     "application/openmetrics-text.", [], None, media="text/plain"),
}

OPENAPI = {
    "openapi": "3.1.0",
    "info": {"title": "agentsla query API", "version": "1",
             "description": "Task SLAs, first-failing-hop root causes, hops, budgets and SLOs "
                            "of AI-agent platforms. See docs/api.md."},
    "paths": PATHS,
    "components": {
        "schemas": SCHEMAS,
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
    },
    "security": [{"bearer": []}],
}


def query_params(path: str) -> frozenset[str]:
    """Names of the query parameters the document lists for a path (empty when undocumented)."""
    op = PATHS.get(path, {}).get("get", {})
    return frozenset(p["name"] for p in op.get("parameters", []) if p["in"] == "query")
