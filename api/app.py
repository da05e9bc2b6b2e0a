"""The query API: a Starlette app serving /api/v1/... and /metrics over the views.

Each request gets a fresh read store from `connect()` (queries.store.ReadStore; over DuckDB, a
cursor of its own) and runs its question in a worker thread (a store serves one thread at a
time; DuckDB releases the GIL while it scans). Routes are one list,
`ROUTES`: adding an endpoint is adding an `Endpoint` (and its entry in api/openapi.py).
"""

from __future__ import annotations

import logging
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from agentsla.config import Config
from agentsla.errors import AgentslaError, NotFound, PermanentError, RetryableError, Unauthorized
from agentsla.api import openapi
from agentsla.api.auth import OPEN, Principal, Tokens
from agentsla.queries._sql import TASK_FILTER_NAMES
from agentsla.queries.budget import budget_waterfall
from agentsla.queries.findings.route import findings_answer
from agentsla.queries.hops import hop_series, hop_stats
from agentsla.api.responses import json_response
from agentsla.queries.metrics import Totals, render_metrics
from agentsla.queries.root_causes import root_cause_series, root_causes
from agentsla.queries.sla import sla_by, sla_series, sla_totals
from agentsla.queries.slo import slo_status
from agentsla.queries.store import ReadStore
from agentsla.queries.tasks import get_task, get_trace, list_tasks
from agentsla.queries.window import Window, parse_time, parse_window, rfc3339

log = logging.getLogger("agentsla.api.app")


@dataclass(frozen=True)
class Ask:
    """One request as the questions see it: parameters, config, the time and app services."""

    params: Mapping[str, str]
    path: Mapping[str, str]
    config: Config
    now_ns: int
    health: Callable[[], dict]
    stats: Callable[[], Mapping[str, float]] | None = None
    principal: Principal = OPEN
    #: the request's Accept header (/metrics: text format or OpenMetrics)
    accept: str = ""
    #: the app's metric totals (/metrics; counters live as long as the app)
    totals: Totals | None = None

    def get(self, name: str) -> str | None:
        """A query parameter, None when absent or empty."""
        return self.params.get(name) or None

    def window(self) -> Window:
        """The request's time window (from/to/window/step)."""
        return parse_window(self.params, self.now_ns)

    def limit(self, default: int, maximum: int, name: str = "limit") -> int:
        """The `limit` parameter (or another count named `name`), checked against 1..maximum."""
        text = self.get(name)
        if text is None:
            return default
        if not re.fullmatch(r"\d+", text) or not 1 <= int(text) <= maximum:
            raise PermanentError(f"bad {name} {text!r}: expected a whole number from 1 to "
                                 f"{maximum}")
        return int(text)

    def filters(self, *names: str) -> dict[str, str | None]:
        """The named filter parameters (None when absent)."""
        return {name: self.get(name) for name in names}


@dataclass(frozen=True)
class Endpoint:
    """A GET route: its path, the function answering it, and whether it needs a token/store."""

    path: str
    answer: Callable[[ReadStore | None, Ask], Any]
    auth: bool = True
    #: what a tenant token may ask: "filter" (tenant_id forced to its tenant), "owned" (the
    #: answer must belong to its tenant, else 404), "admin" (403: spans every tenant), "open"
    tenancy: str = "filter"
    uses_db: bool = True
    converters: Mapping[str, str] = field(default_factory=dict)


# --- answers: each runs in a worker thread with its own store ---------------------------------

def _health(store: ReadStore | None, ask: Ask) -> dict | Response:
    # health() may say otherwise ("status": "unavailable", e.g. a stuck writer): then 503
    body = {"status": "ok", **ask.health()}
    return body if body["status"] == "ok" else json_response(body, 503)


def _sla(store: ReadStore, ask: Ask) -> dict:
    w = ask.window()
    f = ask.filters(*TASK_FILTER_NAMES)
    dim = ask.get("group_by")
    return {"window": w.as_json(), "totals": sla_totals(store, w.start_ns, w.end_ns, **f),
            "group_by": dim,
            "groups": None if dim is None else sla_by(store, w.start_ns, w.end_ns, dim, **f),
            "series": None if w.step_ns is None else sla_series(store, w.start_ns, w.end_ns,
                                                                 w.step_ns, **f)}


def _hops(store: ReadStore, ask: Ask) -> dict:
    w = ask.window()
    f = ask.filters("hop_kind", *TASK_FILTER_NAMES)
    series_limit = ask.limit(20, 100, "series_limit")  # 400 before any query runs
    rows = hop_stats(store, w.start_ns, w.end_ns, limit=ask.limit(500, 5000), **f)
    series = None if w.step_ns is None else hop_series(store, w.start_ns, w.end_ns, w.step_ns,
                                                       limit=series_limit, **f)
    return {"window": w.as_json(), "hops": rows, "series": series}


def _root_causes(store: ReadStore, ask: Ask) -> dict:
    w = ask.window()
    f = ask.filters(*TASK_FILTER_NAMES)
    rows = root_causes(store, w.start_ns, w.end_ns, limit=ask.limit(50, 1000), **f)
    series = None if w.step_ns is None else root_cause_series(store, w.start_ns, w.end_ns,
                                                              w.step_ns, **f)
    # share = tasks / all blamed tasks, so the total survives a `limit` that cut rows off
    blamed = round(rows[0]["tasks"] / rows[0]["share"]) if rows else 0
    return {"window": w.as_json(), "blamed_tasks": blamed, "root_causes": rows, "series": series}


def _budget(store: ReadStore, ask: Ask) -> dict:
    w = ask.window()
    data = budget_waterfall(store, w.start_ns, w.end_ns, **ask.filters(*TASK_FILTER_NAMES))
    return {"window": w.as_json(), **data}


def _slo(store: ReadStore, ask: Ask) -> dict:
    at = parse_time("to", ask.params["to"]) if ask.get("to") else ask.now_ns
    return {"at_ns": at, "at": rfc3339(at),
            "slos": slo_status(store, ask.config, at, task_type=ask.get("task_type"))}


def _tasks(store: ReadStore, ask: Ask) -> dict:
    w = ask.window()
    rows = list_tasks(store, w.start_ns, w.end_ns, limit=ask.limit(100, 1000), **ask.filters(
        "outcome", *TASK_FILTER_NAMES, "ffh_kind", "ffh_name"))
    return {"window": w.as_json(), "tasks": rows}


def _task(store: ReadStore, ask: Ask) -> dict:
    found = get_task(store, ask.path["task_id"])
    if found is None or not ask.principal.sees(found):  # another tenant's task: not found
        raise NotFound(f"unknown task {ask.path['task_id']!r}")
    return found


def _trace(store: ReadStore, ask: Ask) -> dict:
    found = get_trace(store, ask.path["trace_id"])
    if found is None or not _trace_visible(store, ask.principal, found):
        raise NotFound(f"unknown trace {ask.path['trace_id']!r}")
    return found


def _trace_visible(store: ReadStore, principal: Principal, trace: dict) -> bool:
    # a tenant sees a trace that holds one of its tasks
    return principal.admin or any(
        (task := get_task(store, t)) is not None and principal.sees(task)
        for t in trace["task_ids"])


def _metrics(store: ReadStore, ask: Ask) -> Response:
    body, content_type = render_metrics(store, ask.config, ask.totals, ask.now_ns, ask.accept,
                                        ask.stats or (lambda: _ingest_of(ask)))
    return Response(body, headers={"content-type": content_type})


def _ingest_of(ask: Ask) -> Mapping[str, float]:
    # without a stats callable, /metrics exposes the numbers of health()["ingest"]
    ingest = ask.health().get("ingest")
    return ingest if isinstance(ingest, Mapping) else {}


def _openapi(store: ReadStore | None, ask: Ask) -> dict:
    return openapi.OPENAPI


#: Every route of the API. To add one: an Endpoint here and its path in api/openapi.py.
ROUTES: list[Endpoint] = [
    Endpoint("/api/v1/health", _health, auth=False, uses_db=False),
    Endpoint("/api/v1/sla", _sla),
    Endpoint("/api/v1/hops", _hops),
    Endpoint("/api/v1/root-causes", _root_causes),
    Endpoint("/api/v1/budget", _budget),
    Endpoint("/api/v1/findings", findings_answer, tenancy="admin"),
    Endpoint("/api/v1/slo", _slo, tenancy="admin"),
    Endpoint("/api/v1/tasks", _tasks),
    Endpoint("/api/v1/tasks/{task_id}", _task, converters={"task_id": "path"}, tenancy="owned"),
    Endpoint("/api/v1/traces/{trace_id}", _trace, tenancy="owned"),
    Endpoint("/api/v1/openapi.json", _openapi, uses_db=False, tenancy="open"),
    Endpoint("/metrics", _metrics, tenancy="admin"),
]


# --- the app -----------------------------------------------------------------------------------

def _error(exc: AgentslaError) -> Response:
    headers = {}
    if isinstance(exc, RetryableError):
        headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after_s)))
    if isinstance(exc, Unauthorized):
        headers["WWW-Authenticate"] = "Bearer"
    return json_response({"error": exc.message}, exc.status, headers)


def _scoped(endpoint: Endpoint, params: dict[str, str], principal: Principal) -> dict[str, str]:
    """Apply a tenant token's scope to a request's parameters (403 outside its tenant)."""
    if principal.admin or endpoint.tenancy in ("open", "owned"):
        return params
    if endpoint.tenancy == "admin":
        principal.require_admin(endpoint.path)
    params["tenant_id"] = principal.tenant_filter(params.get("tenant_id"))
    return params


def _check_params(endpoint: Endpoint, request: Request) -> None:
    allowed = openapi.query_params(endpoint.path)
    unknown = sorted(set(request.query_params) - allowed)
    if unknown:
        expected = ", ".join(sorted(allowed)) or "none"
        raise PermanentError(f"unknown parameter {unknown[0]!r} for {endpoint.path}; "
                             f"expected: {expected}")


def _handler(endpoint: Endpoint, connect: Callable[[], ReadStore], config: Config,
             health: Callable[[], dict], stats, now: Callable[[], int], tokens: Tokens,
             totals: Totals):
    def run(ask: Ask) -> Response:
        if not endpoint.uses_db:
            result = endpoint.answer(None, ask)
        else:
            store = connect()
            try:
                result = endpoint.answer(store, ask)
            finally:
                store.close()
        return result if isinstance(result, Response) else json_response(result)

    async def handle(request: Request) -> Response:
        try:
            principal = tokens.principal(request.headers.get("authorization", "")) \
                if endpoint.auth else OPEN
            _check_params(endpoint, request)
            ask = Ask(_scoped(endpoint, dict(request.query_params), principal),
                      dict(request.path_params), config, now(), health, stats, principal,
                      request.headers.get("accept", ""), totals)
            return await run_in_threadpool(run, ask)
        except AgentslaError as exc:
            return _error(exc)
        except Exception:  # noqa: BLE001 - the edge: log it, answer 500 without a traceback
            log.exception("query API %s failed", request.url.path)
            return json_response({"error": "internal error; see the agentsla server log"}, 500)

    return handle


def _route_path(endpoint: Endpoint) -> str:
    path = endpoint.path
    for name, converter in endpoint.converters.items():
        path = path.replace("{%s}" % name, "{%s:%s}" % (name, converter))
    return path


async def _http_error(request: Request, exc: HTTPException) -> Response:
    return json_response({"error": f"{exc.detail}: {request.method} {request.url.path}"}, exc.status_code)


def create_api_app(connect: Callable[[], ReadStore], config: Config,
                   health: Callable[[], dict],
                   stats: Callable[[], Mapping[str, float]] | None = None,
                   now: Callable[[], int] = time.time_ns,
                   extra_routes: Sequence[BaseRoute] = ()) -> Starlette:
    """Build the query API app; `connect()` returns a fresh read store for one request.

    `extra_routes` are mounted as they are (the alert service's /api/v1/alerts and silences).

    `health()` supplies the body of /api/v1/health; `stats()` the ingest numbers of /metrics
    (e.g. {"accepted_spans": 10, "refused_spans": 0}; default: the numbers in
    `health()["ingest"]`); `now()` the clock.
    """
    tokens = Tokens.from_config(config.server)  # a bad tokens file fails here, at start
    totals = Totals(now())  # /metrics counters: from the app's start on (queries/metrics)
    routes = [Route(_route_path(e), _handler(e, connect, config, health, stats, now, tokens,
                                             totals),
                    methods=["GET"], name=e.path) for e in ROUTES]
    return Starlette(routes=[*routes, *extra_routes], exception_handlers={HTTPException: _http_error})
