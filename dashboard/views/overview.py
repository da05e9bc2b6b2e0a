"""Overview: task success beside gateway success, rates, traffic, SLOs and burn, per task type."""

from __future__ import annotations

from concurrent.futures import Future

import streamlit as st

from agentsla.dashboard import data, figures, filters, fmt, render, tables


def _headline(totals: dict, window: dict) -> None:
    seconds = (window["to_ns"] - window["from_ns"]) / 1e9
    cols = st.columns(7)
    cols[0].metric("Task success", fmt.pct(totals.get("success_rate")),
                   help="Finished tasks (cancelled excluded) whose outcome is success.")
    cols[1].metric("Gateway success", fmt.pct(totals.get("gateway_success_rate")),
                   help="Roots that answered without ERROR, HTTP 5xx or 429. A gateway that "
                        "says 200 while tasks fail shows up as a gap between the two.")
    cols[2].metric("Degraded (fallback)", fmt.pct(totals.get("degraded_rate")))
    cols[3].metric("Budget exhausted", fmt.pct(totals.get("budget_exhausted_rate")))
    cols[4].metric("Lost tasks", fmt.count(totals.get("lost")),
                   help="Tasks whose root never arrived within budget plus grace.")
    cols[5].metric("Finished tasks", fmt.count(totals.get("finished")),
                   help=f"{fmt.rate_per_min(totals.get('finished'), seconds)} over the window")
    cols[6].metric("In progress", fmt.count(totals.get("in_progress")))
    st.caption(f"Window {fmt.timestamp(window['from'])} → {fmt.timestamp(window['to'])} · "
               f"traffic {fmt.rate_per_min(totals.get('finished'), seconds)} · task latency "
               f"p50 {fmt.duration(totals.get('latency_p50_ms'))}, "
               f"p95 {fmt.duration(totals.get('latency_p95_ms'))}, "
               f"p99 {fmt.duration(totals.get('latency_p99_ms'))}")


def _slos(asked: Future) -> None:
    st.subheader("Error budget and burn rates")
    render.filter_note("/api/v1/slo", "the error budgets")
    answer = asked.result()
    slos = answer.get("slos") or []
    if not slos:
        st.info("No finished tasks in the SLO windows yet, and no SLO configured.")
        return
    render.table(tables.slo_rows(slos))
    render.chart(figures.burn_rates(slos), "burn")


def body() -> None:
    """Draw the overview from /api/v1/sla and /api/v1/slo (asked at once)."""
    f = filters.current()
    render.filter_note("/api/v1/sla")
    sla_asked, slo_asked = data.call_all(
        ("sla", filters.api_params("/api/v1/sla", step=f.step, group_by="task_type")),
        ("slo", filters.api_params("/api/v1/slo")))
    sla = sla_asked.result()
    _headline(sla["totals"], sla["window"])
    left, right = st.columns(2)
    with left:
        render.chart(figures.success_over_time(sla.get("series") or []), "success_series")
    with right:
        render.chart(figures.traffic_over_time(sla.get("series") or []), "traffic_series")
    _slos(slo_asked)
    st.subheader("Per task type")
    groups = sla.get("groups") or []
    if groups:
        render.table(tables.per_task_type(groups))
    else:
        st.info("No tasks in this window.")


render.page("Overview", body, charts=True)
