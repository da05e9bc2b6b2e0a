"""Shared rendering: the page guard (errors as messages, never tracebacks), charts and notes."""

from __future__ import annotations

import gc
import logging
import re
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import plotly.graph_objects as go
import streamlit as st
from streamlit.components.v1 import declare_component

from agentsla.dashboard import data, filters
from agentsla.errors import AgentslaError, Forbidden, Unauthorized

log = logging.getLogger("agentsla.dashboard")
#: Seconds between looks at a deferred answer (render.pending): each look is a short fragment
#: run that shows Streamlit's running indicator, so not more often.
PENDING_POLL_S = 3.0
#: The chart component: chart.js and the partial plotly.js bundle npm installs beside it.
CHART_DIR = Path(__file__).parent / "plotly_component"
CHART_BUNDLE = (CHART_DIR / "node_modules" / "plotly.js-cartesian-dist-min"
                / "plotly-cartesian.min.js")
# Registered only so Streamlit serves CHART_DIR's files (at component/<name>/...): the charts
# themselves are a v2 component in the page, which loads the bundle from there once per tab.
_files = declare_component("plotly_files", path=str(CHART_DIR))
#: The bundle's URL relative to a page (pages are one level deep, also under a base URL path).
CHART_BUNDLE_URL = f"component/{_files.name}/{CHART_BUNDLE.relative_to(CHART_DIR).as_posix()}"
_chart = st.components.v2.component("agentsla_chart", html="<div></div>",
                                    js=(CHART_DIR / "chart.js").read_text(),
                                    isolate_styles=False)
#: What Streamlit's Plotly theme gave the figures: no background of their own (the page's shows),
#: grid lines legible on light and dark, margins that grow to fit the axis labels; the text
#: colour and font come from the page's theme (plotly_component/chart.js).
_AXIS = dict(gridcolor="rgba(128,128,128,0.25)", zerolinecolor="rgba(128,128,128,0.5)",
             automargin=True, title_standoff=15)
CHART_TEMPLATE = go.layout.Template(layout=dict(
    paper_bgcolor="rgba(0,0,0,0)", plot_bgcolor="rgba(0,0,0,0)", hoverlabel_align="left",
    title_x=0.05, xaxis=_AXIS, yaxis=_AXIS))


@st.cache_resource(show_spinner=False)
def freeze_heap() -> None:
    """Once per process, after its first page (Plotly, pandas and the rest imported): move every
    object then alive out of the garbage collector's reach (gc.freeze). They live as long as the
    process anyway, and Streamlit's full collection after every script run (and Python's own)
    otherwise walked them all, 0.1-0.4 s a page while the page's last messages waited for the
    GIL (docs/dashboard.md)."""
    gc.collect()
    gc.freeze()


def page(title: str, body: Callable[[], None], charts: bool = False) -> None:
    """Render a page: its title, then `body` guarded, re-run on the auto-refresh interval.
    A page with `charts` starts loading plotly.js first (preload_charts)."""
    st.title(title)
    if charts:
        preload_charts()
    seconds = filters.current().refresh_s
    if seconds:
        st.fragment(run_every=seconds)(lambda: _guarded(body))()
    else:
        _guarded(body)


def _guarded(body: Callable[[], None]) -> None:
    try:
        body()
    except Unauthorized as exc:
        st.error(f"The API refused the dashboard's token: {exc.message}. Start the dashboard "
                 "with the API's token (AGENTSLA_API_TOKEN or api_token).", icon="🔒")
    except Forbidden as exc:
        st.warning(f"This dashboard's token may not see this view: {exc.message}. An admin "
                   "token sees every tenant.", icon="🔒")
    except AgentslaError as exc:
        st.error(exc.message, icon="⚠️")
        st.caption("The page will show data again on the next refresh once the API answers.")
    except Exception as exc:  # noqa: BLE001 - the edge: a page shows a message, not a traceback
        log.exception("dashboard page failed")
        st.error(f"This page could not be drawn: {type(exc).__name__}: {exc}", icon="⚠️")
    st.caption(f"Data from {data.target().url} · updated {time.strftime('%H:%M:%S')}")


def chart(fig: go.Figure, key: str) -> None:
    """Show a figure through the partial plotly.js bundle (scatter, bar, heatmap), in the page's
    light or dark theme. Not st.plotly_chart: its full plotly.js made every fresh tab 2.1-2.6x
    an empty page before drawing anything (docs/dashboard.md)."""
    if not CHART_BUNDLE.exists():
        st.error(f"This chart cannot be drawn: {CHART_BUNDLE} is missing. Install it with "
                 f"`npm ci` in {CHART_DIR} (scripts/_setup.sh does).", icon="⚠️")
        return
    fig.update_layout(template=CHART_TEMPLATE)
    _chart(data={"figure": fig.to_json(), "bundle": CHART_BUNDLE_URL,
                 "config": {"displaylogo": False, "responsive": True}}, key=key)


def preload_charts() -> None:
    """Start loading plotly.js in the browser before the page asks the API anything: a fresh
    tab otherwise fetched and evaluated it only once the first figure arrived, after the API's
    answers (docs/dashboard.md). Drawn at the end of the sidebar, where its empty element's
    place is not seen."""
    if CHART_BUNDLE.exists():
        with st.sidebar:
            _chart(data={"bundle": CHART_BUNDLE_URL}, key="plotly_preload")


#: What Markdown (with Streamlit's LaTeX and colour directives) reads inside a line, and at a
#: line's start (headings, quotes, lists): st.table draws every cell as Markdown.
_MARKDOWN_INLINE = re.compile(r"([\\`*_\[\]<>$~|&!])")
_MARKDOWN_LINE_START = re.compile(r"^(\s*)(>|(?:[#+*-]|\d+[.)])(?=\s|$))", re.MULTILINE)


def literal(value: Any) -> Any:
    """A table cell shown as written: a string's Markdown characters backslash-escaped
    (CommonMark's escape for ASCII punctuation); other values as they are."""
    if not isinstance(value, str):
        return value
    text = _MARKDOWN_INLINE.sub(r"\\\1", value)
    return _MARKDOWN_LINE_START.sub(lambda m: f"{m[1]}{m[2][:-1]}\\{m[2][-1]}", text)


def table(rows: Sequence[Mapping[str, Any]]) -> None:
    """Show rows (formatted for people, tables.py) as a static table, every row at once.

    Not st.dataframe, except where a row is selected: its canvas grid (glide-data-grid, loaded
    and drawn in the browser) made a page with one small table 1.4x an empty page where a
    static table is 1.1-1.3x (docs/dashboard.md)."""
    st.table([{k: literal(v) for k, v in row.items()} for row in rows], hide_index=True)


def filter_note(path: str, what: str = "this view") -> None:
    """Say which sidebar filters the API cannot apply to `what`, instead of ignoring them silently.

    Every page's main route takes every sidebar filter; the note shows for sections whose route
    does not (SLOs, findings) and against an older API whose schema lacks a filter.
    """
    missing = filters.unsupported(path)
    if missing:
        st.warning(f"The API cannot filter {what} by {', '.join(missing).lower()} "
                   f"({path} has no such parameter); showing all of them.", icon="ℹ️")


def pending(what: str, waiting: data.Pending) -> None:
    """Hold the place of a section whose answer is still being computed (data.call_later): say
    so, look again every PENDING_POLL_S, and redraw the page once the answer (or its error) is in.
    """
    @st.fragment(run_every=PENDING_POLL_S)
    def _poll() -> None:
        if waiting.done():
            st.rerun()
        st.info(f"{what} are still being computed by the API ({waiting.waited_s():.0f} s so "
                f"far); they appear here when ready, the rest of the page is complete. The "
                f"dashboard gives up after {data.DEFERRED_TIMEOUT_S:.0f} s.",
                icon=":material/hourglass_top:")

    _poll()
