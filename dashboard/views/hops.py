"""Hops: per model and tool latency percentiles, timeout/429/circuit rates, attempts, TTFT,
and a heatmap of the busiest hops over time."""

from __future__ import annotations

import streamlit as st

from agentsla.contract import HOP_KINDS
from agentsla.dashboard import data, figures, filters, fmt, render, tables

ALL = "all kinds"


def _heatmap(answer: dict) -> None:
    metric = st.radio("Heatmap colour", list(figures.HEATMAP_METRICS), key="hop_heat",
                      horizontal=True, format_func=lambda k: figures.HEATMAP_METRICS[k][0])
    render.chart(figures.hop_heatmap(answer.get("series") or [], metric,
                                     window=answer.get("window")), "hop_heatmap")


def body() -> None:
    """Draw the hop table, latency and failure-rate figures, and the heatmap over time."""
    f = filters.current()
    render.filter_note("/api/v1/hops")
    kind = st.selectbox("Hop kind", [ALL, *HOP_KINDS], key="hop_kind",
                        index=([ALL, *HOP_KINDS].index(st.query_params.get("hop_kind", ALL))
                               if st.query_params.get("hop_kind", ALL) in HOP_KINDS else 0))
    if kind == ALL:
        st.query_params.pop("hop_kind", None)
    else:
        st.query_params["hop_kind"] = kind
    answer = data.call("hops", **filters.api_params(
        "/api/v1/hops", hop_kind=None if kind == ALL else kind, step=f.step))
    hops = answer.get("hops") or []
    if not hops:
        st.info("No spans ended in this window.")
        return
    calls = sum(h.get("calls") or 0 for h in hops)
    cols = st.columns(4)
    cols[0].metric("Hops", fmt.count(len(hops)))
    cols[1].metric("Calls (spans)", fmt.count(calls))
    cols[2].metric("Timeouts", fmt.count(sum(h.get("timeouts") or 0 for h in hops)))
    cols[3].metric("429s", fmt.count(sum(h.get("rate_limited") or 0 for h in hops)))
    render.table(tables.hop_rows(hops))
    left, right = st.columns(2)
    with left:
        render.chart(figures.hop_latency(hops), "hop_latency")
    with right:
        render.chart(figures.hop_failure_rates(hops), "hop_failures")
    _heatmap(answer)


render.page("Hops", body, charts=True)
