"""Read the query API for the pages: through agentsla.client only, answers cached briefly.

Errors are not cached (Streamlit's cache stores only returned values), so a page that could
not reach the API recovers on the next refresh.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

from agentsla.client import ApiClient
from agentsla.errors import AgentslaError

#: Seconds an API answer is reused: short, so "now" windows stay fresh.
CACHE_TTL_S = 10
#: Seconds the sidebar's filter values (task types, tenants, services seen) are reused: they
#: change rarely, and asking for them cost every page three grouped /sla queries.
LASTING_TTL_S = 300
#: Seconds the schema of the API (which filters each route accepts) is reused.
SCHEMA_TTL_S = 300
#: Seconds before a slow API is reported as unreachable.
TIMEOUT_S = 15.0
#: Seconds a deferred section (the findings) waits for its answer: the rest of its page is drawn
#: meanwhile, so it may wait longer than a page's own calls.
DEFERRED_TIMEOUT_S = 120.0
#: Deferred calls sent to the API at once (more wait for a slot).
DEFERRED_CALLS = 4
_TARGET_KEY = "_agentsla_api_target"


@dataclass(frozen=True)
class ApiTarget:
    """Where the query API is, the bearer token to send (None without one) and its TLS files."""

    url: str
    token: str | None = None
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""


def set_target(target: ApiTarget) -> None:
    """Remember the API the app was started against (called by app.py on every run)."""
    st.session_state[_TARGET_KEY] = target


def target() -> ApiTarget:
    """Return the API target set by app.py."""
    return st.session_state[_TARGET_KEY]


@st.cache_resource(show_spinner=False)
def _client(where: ApiTarget, timeout: float = TIMEOUT_S) -> ApiClient:
    # one pooled client per API; httpx.Client is safe to share between sessions' threads
    return ApiClient(where.url, token=where.token, timeout=timeout, ca_file=where.ca_file,
                     cert_file=where.cert_file, key_file=where.key_file)


@st.cache_data(ttl=CACHE_TTL_S, show_spinner=False, max_entries=512)
def _fetch(where: ApiTarget, method: str, args: tuple, params: tuple) -> Any:
    return getattr(_client(where), method)(*args, **dict(params))


@st.cache_data(ttl=LASTING_TTL_S, show_spinner=False, max_entries=64)
def _fetch_lasting(where: ApiTarget, method: str, args: tuple, params: tuple) -> Any:
    return getattr(_client(where), method)(*args, **dict(params))


def _clean(params: dict[str, Any]) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in params.items() if v is not None and v != ""))


def call(method: str, *args: str, lasting: bool = False, **params: Any) -> Any:
    """Call one ApiClient method (e.g. `call("sla", window="1h")`), cached for CACHE_TTL_S
    (LASTING_TTL_S with `lasting=True`).

    Raises AgentslaError with the API's message (or "cannot reach the agentsla API at ...").
    """
    fetch = _fetch_lasting if lasting else _fetch
    return fetch(target(), method, tuple(args), _clean(params))


def call_all(*calls: tuple[str, dict[str, Any]]) -> list[Future]:
    """Make several `call`s at once, each `(method, params)`; return when all have answered.

    One thread per call (with this script run's context, which `st.cache_data` and the
    session's API target need), so a page waits for its slowest answer instead of their sum.
    Each future's `result()` is its answer or raises its own error, so every section of the
    page still shows its own message.
    """
    ctx = get_script_run_ctx()

    def run(method: str, params: dict[str, Any]) -> Any:
        add_script_run_ctx(threading.current_thread(), ctx)
        return call(method, **params)

    with ThreadPoolExecutor(max_workers=len(calls), thread_name_prefix="agentsla-call") as pool:
        return [pool.submit(run, method, params) for method, params in calls]


class Pending(Exception):
    """A deferred answer is still being computed by the API (see `call_later`)."""

    def __init__(self, future: Future, started: float):
        super().__init__("still computing")
        self.future = future
        self.started = started

    def done(self) -> bool:
        """Tell whether the answer (or its error) has arrived."""
        return self.future.done()

    def waited_s(self) -> float:
        """Seconds since the call was sent."""
        return time.monotonic() - self.started


class _Background:
    """Deferred calls shared by every session: one computation per call in flight, a finished
    answer reused for CACHE_TTL_S, an error handed out once (errors are not cached)."""

    def __init__(self) -> None:
        # re-entrant: a call that is done before add_done_callback runs its callback at once
        self.lock = threading.RLock()
        self.slots = threading.BoundedSemaphore(DEFERRED_CALLS)
        self.calls: dict[tuple, tuple[Future, float]] = {}
        self.finished: dict[tuple, float] = {}

    def get(self, key: tuple, client: ApiClient) -> tuple[Future, float]:
        """The call's future (started now unless in flight or recently finished) and when it
        was sent; a failed one is forgotten as it is handed out."""
        with self.lock:
            future, started = self.start(key, client)
            if future.done() and future.exception() is not None:
                self._forget(key)
            return future, started

    def start(self, key: tuple, client: ApiClient) -> tuple[Future, float]:
        """Start the call unless it is in flight or recently finished (a failure is kept for
        the `get` that hands it out); return its future and when it was sent."""
        now = time.monotonic()
        with self.lock:
            for old, at in list(self.finished.items()):
                if at + CACHE_TTL_S < now:
                    self._forget(old)
            if key not in self.calls:
                method, args, params = key[1:]
                future = self._start(getattr(client, method), *args, **dict(params))
                self.calls[key] = (future, now)
                future.add_done_callback(lambda _: self._finished(key))
            return self.calls[key]

    def _start(self, fn, *args: Any, **kwargs: Any) -> Future:
        """Run fn on a daemon thread, DEFERRED_CALLS at a time. Daemon: a call in flight must
        not hold the process at exit (a ThreadPoolExecutor's threads are joined at exit, so
        SIGTERM to the dashboard waited for a slow /findings, up to DEFERRED_TIMEOUT_S)."""
        future: Future = Future()

        def run() -> None:
            with self.slots:
                if not future.set_running_or_notify_cancel():
                    return
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as exc:  # noqa: BLE001 - handed to the page as the answer
                    future.set_exception(exc)
        threading.Thread(target=run, name="agentsla-deferred", daemon=True).start()
        return future

    def _finished(self, key: tuple) -> None:
        with self.lock:
            self.finished[key] = time.monotonic()

    def _forget(self, key: tuple) -> None:
        self.calls.pop(key, None)
        self.finished.pop(key, None)

    def clear(self) -> None:
        with self.lock:
            for key in list(self.finished):
                self._forget(key)


@st.cache_resource(show_spinner=False)
def _background() -> _Background:
    return _Background()


def start_later(method: str, *args: str, **params: Any) -> None:
    """Start a `call_later` of a section drawn after the rest of its page at the top of the
    page, so the API computes it while the rest is fetched and drawn."""
    _background().start(*_deferred(method, args, params))


def _deferred(method: str, args: tuple[str, ...], params: dict[str, Any]
              ) -> tuple[tuple, ApiClient]:
    """A deferred call's key among the shared ones, and the client it is made with."""
    where = target()
    return (where, method, tuple(args), _clean(params)), _client(where, DEFERRED_TIMEOUT_S)


def call_later(method: str, *args: str, **params: Any) -> Any:
    """Call one ApiClient method in the background, for a section drawn after the rest of its
    page: return its answer once it has arrived, else raise Pending (draw a placeholder and
    look again, see render.pending). Waits up to DEFERRED_TIMEOUT_S; errors as `call`."""
    # Pending is raised here, not in the shared _Background: after Streamlit reloads this
    # module (a changed source file) the cached instance's classes are the old module's
    future, started = _background().get(*_deferred(method, args, params))
    if not future.done():
        raise Pending(future, started)
    return future.result()


@st.cache_data(ttl=SCHEMA_TTL_S, show_spinner=False)
def _accepted(where: ApiTarget) -> dict[str, frozenset[str]]:
    spec = _client(where).openapi()
    out = {}
    for path, item in (spec.get("paths") or {}).items():
        op = item.get("get") or {}
        out[path] = frozenset(p["name"] for p in op.get("parameters", []) if p.get("in") == "query")
    return out


def accepted_params(path: str) -> frozenset[str] | None:
    """Query parameters the API documents for `path` (None when its schema is unavailable)."""
    where = target()
    try:
        return _accepted(where).get(path, frozenset())
    except AgentslaError:
        return None


def act(method: str, *args: str, **params: Any) -> Any:
    """Call one ApiClient method that changes state (e.g. `act("ack_incident", id, "ana")`),
    uncached, then forget cached answers so the page shows the change."""
    where = target()
    answer = getattr(_client(where), method)(*args, **params)
    clear()
    return answer


def clear() -> None:
    """Forget every cached answer (the Refresh button)."""
    _fetch.clear()
    _accepted.clear()
    _background().clear()
