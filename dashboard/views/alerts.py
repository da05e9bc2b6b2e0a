"""Alerts: what /api/v1/alerts reports; says plainly that alerts are not configured on a 404."""

from __future__ import annotations

import streamlit as st

from agentsla.dashboard import data, fmt, render
from agentsla.errors import NotFound

_COLUMNS = ("state", "tier", "alertname", "severity", "summary", "starts_at", "first_failing_hop")


def _row(alert: dict) -> dict:
    labels = alert.get("labels") or {}
    annotations = alert.get("annotations") or {}
    row = {}
    for key in _COLUMNS:
        value = alert.get(key, labels.get(key, annotations.get(key)))
        row[key.replace("_", " ")] = fmt.MISSING if value is None else str(value)
    return row


def body() -> None:
    """Show the alerts, or that alerting is not configured."""
    try:
        answer = data.call("alerts")
    except NotFound:
        st.info("Alerts are not configured: this agentsla API has no /api/v1/alerts. "
                "Alert rules, routing and notifications will appear here once the server "
                "evaluates them.", icon=":material/notifications_off:")
        return
    alerts = answer.get("alerts", []) if isinstance(answer, dict) else answer
    if not alerts:
        st.success("No alerts are firing.")
        return
    render.table([_row(a) for a in alerts])


render.page("Alerts", body)
