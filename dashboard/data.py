"""Read the query API for the pages: through agentsla.client only, answers cached briefly.

Errors are not cached (Streamlit's cache stores only returned values), so a page that could
not reach the API recovers on the next refresh.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

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
def _client(where: ApiTarget) -> ApiClient:
    # one pooled client per API; httpx.Client is safe to share between sessions' threads
    return ApiClient(where.url, token=where.token, timeout=TIMEOUT_S, ca_file=where.ca_file,
                     cert_file=where.cert_file, key_file=where.key_file)


@st.cache_data(ttl=CACHE_TTL_S, show_spinner=False, max_entries=512)
def _fetch(where: ApiTarget, method: str, args: tuple, params: tuple) -> Any:
    return getattr(_client(where), method)(*args, **dict(params))


@st.cache_data(ttl=LASTING_TTL_S, show_spinner=False, max_entries=64)
def _fetch_lasting(where: ApiTarget, method: str, args: tuple, params: tuple) -> Any:
    return getattr(_client(where), method)(*args, **dict(params))


def call(method: str, *args: str, lasting: bool = False, **params: Any) -> Any:
    """Call one ApiClient method (e.g. `call("sla", window="1h")`), cached for CACHE_TTL_S
    (LASTING_TTL_S with `lasting=True`).

    Raises AgentslaError with the API's message (or "cannot reach the agentsla API at ...").
    """
    where = target()
    clean = tuple(sorted((k, str(v)) for k, v in params.items() if v is not None and v != ""))
    fetch = _fetch_lasting if lasting else _fetch
    return fetch(where, method, tuple(args), clean)


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
