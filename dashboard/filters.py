"""The global filters in the sidebar, kept in the URL (st.query_params) so views can be shared.

URL keys: `window` (15m ... 30d), `task_type`, `tenant`, `service`, `refresh` (seconds, 0 = off).
Pages keep their own keys (`task`, `trace`, `outcome`, ...) beside these.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import streamlit as st

from agentsla.config import parse_duration
from agentsla.dashboard import data
from agentsla.errors import AgentslaError

ALL = "All"
#: Window choices and the bucket step of their time series (about 60 buckets each).
WINDOWS = {"15m": "15s", "1h": "1m", "6h": "5m", "24h": "20m", "3d": "1h", "7d": "3h",
           "30d": "12h"}
DEFAULT_WINDOW = "1h"
REFRESH_CHOICES = {0: "off", 10: "every 10 s", 30: "every 30 s", 60: "every minute",
                   300: "every 5 minutes"}
#: URL key, session key and API parameter of each dimension filter.
_DIMENSIONS = (("task_type", "task_type", "task_type"), ("tenant", "tenant_id", "tenant_id"),
               ("service", "service_name", "service_name"))
_LABELS = {"task_type": "Task type", "tenant": "Tenant", "service": "Service"}


@dataclass(frozen=True)
class Filters:
    """The filters chosen in the sidebar."""

    window: str = DEFAULT_WINDOW
    task_type: str | None = None
    tenant_id: str | None = None
    service_name: str | None = None
    refresh_s: int = 0

    @property
    def step(self) -> str:
        """Bucket length of time series for this window."""
        return WINDOWS.get(self.window, "1m")

    def start_s(self, now_s: float | None = None) -> int:
        """Unix seconds where the window starts: its length before now, rounded up to a whole
        hour when its step is whole hours, else to a whole minute (the window is then at most
        its nominal length, and its last bucket is the one holding now).

        The API reads a series from the per-minute (per-hour) rollups only when every bucket
        holds whole minutes (hours); a window ending at an arbitrary "now" would start
        mid-minute and read raw spans instead (/hops over 24 h at 10M spans: 6.7-8.3 s instead
        of 1.7-2.3 s on a loaded 2-vCPU VM).
        """
        now_s = time.time() if now_s is None else now_s
        unit = 3600 if parse_duration(self.step) % 3600 == 0 else 60
        return -(-int(now_s - parse_duration(self.window)) // unit) * unit

    def dimensions(self) -> dict[str, str | None]:
        """The dimension filters as API parameters."""
        return {"task_type": self.task_type, "tenant_id": self.tenant_id,
                "service_name": self.service_name}


def current() -> Filters:
    """Return the filters of this run (defaults before the sidebar has run)."""
    return st.session_state.get("_filters", Filters())


def api_params(path: str, **extra: Any) -> dict[str, Any]:
    """Return the window and the filters `path` accepts as API parameters, plus `extra`.

    With a series (`step` in `extra`) the window is sent as its aligned start (`from`, see
    Filters.start_s; it ends now) when the route takes `from`, else as `window`: a question
    without a series keeps one key all along, so a deferred answer (data.call_later) slower
    than a minute is still the one asked for when it arrives. Filters the route does not
    accept are left out; `unsupported(path)` names them.
    """
    f = current()
    accepted = data.accepted_params(path)
    aligned = "step" in extra and accepted is not None and "from" in accepted
    window = {"from": f.start_s()} if aligned else {"window": f.window}
    params: dict[str, Any] = {**window, **f.dimensions(), **extra}
    return {k: v for k, v in params.items()
            if v is not None and (accepted is None or k in accepted or k in extra)}


def unsupported(path: str) -> list[str]:
    """Name the filters set in the sidebar that the API cannot apply to `path`."""
    accepted = data.accepted_params(path)
    if accepted is None:
        return []
    return [_LABELS[url] for url, _, param in _DIMENSIONS
            if current().dimensions()[param] and param not in accepted]


def _from_url(key: str, default: Any) -> Any:
    value = st.query_params.get(key)
    return default if value in (None, "") else value


def _choices(param: str, window: str) -> list[str]:
    """Values seen for a dimension in the window (busiest first), from /api/v1/sla?group_by=."""
    try:
        answer = data.call("sla", window=window, group_by=param, lasting=True)
    except AgentslaError:
        return []
    return [g[param] for g in answer.get("groups") or [] if g.get(param)]


def _select(label: str, options: list[str], key: str, url_value: Any) -> str:
    if key not in st.session_state:
        st.session_state[key] = url_value
    if st.session_state[key] not in options:
        options = [*options, st.session_state[key]]
    return st.sidebar.selectbox(label, options, key=key)


def sidebar() -> Filters:
    """Draw the filters in the sidebar, write them to the URL and return them."""
    st.sidebar.header("Filters")
    window = _select("Time window", list(WINDOWS), "flt_window",
                     _from_url("window", DEFAULT_WINDOW))
    values = {}
    for url_key, state_key, param in _DIMENSIONS:
        options = [ALL, *_choices(param, window)]
        chosen = _select(_LABELS[url_key], options, f"flt_{state_key}", _from_url(url_key, ALL))
        values[param] = None if chosen == ALL else chosen
    refresh = _refresh()
    filters = Filters(window, values["task_type"], values["tenant_id"], values["service_name"],
                      refresh)
    st.session_state["_filters"] = filters
    _to_url(filters)
    return filters


def _refresh() -> int:
    key = "flt_refresh"
    if key not in st.session_state:
        try:
            wanted = int(_from_url("refresh", 0))
        except ValueError:
            wanted = 0
        st.session_state[key] = wanted if wanted in REFRESH_CHOICES else 0
    return st.sidebar.selectbox("Auto-refresh", list(REFRESH_CHOICES), key=key,
                                format_func=REFRESH_CHOICES.get)


def _to_url(filters: Filters) -> None:
    wanted = {"window": filters.window if filters.window != DEFAULT_WINDOW else None,
              "task_type": filters.task_type, "tenant": filters.tenant_id,
              "service": filters.service_name,
              "refresh": str(filters.refresh_s) if filters.refresh_s else None}
    for key, value in wanted.items():
        if value is None:
            if key in st.query_params:
                del st.query_params[key]
        elif st.query_params.get(key) != value:
            st.query_params[key] = value
