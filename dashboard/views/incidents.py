"""Incidents: what /api/v1/incidents reports, one incident's timeline, exports, ack and notes."""

from __future__ import annotations

import streamlit as st

from agentsla.contract import FailingHop
from agentsla.dashboard import data, fmt, render
from agentsla.errors import NotFound

_FORMATS = (("md", "Post-mortem (Markdown)", "text/markdown"),
            ("html", "Report (HTML)", "text/html"), ("csv", "Timeline (CSV)", "text/csv"),
            ("json", "Document (JSON)", "application/json"))


def _secs(seconds: float | None) -> str:
    return fmt.duration(None if seconds is None else seconds * 1000.0)


def _headline(inc: dict) -> str:
    """Name the dominant first failing hop over the incident so far (it moves with the Pareto)."""
    hop = FailingHop.from_json(inc.get("first_failing_hop"))
    share = inc.get("first_failing_hop_share")
    return "unknown" if hop is None else fmt.hop(hop.kind, hop.name, hop.reason) + (
        f" · {fmt.pct(share)} of blamed tasks" if share is not None else "")


def _row(inc: dict) -> dict:
    return {"id": inc["id"], "state": inc["state"], "severity": inc["severity"],
            "title": inc["title"], "first failing hop": _headline(inc),
            "detected": fmt.timestamp(inc.get("detected")),
            "time to detect": _secs(inc.get("time_to_detect_s")),
            "time to ack": _secs(inc.get("time_to_acknowledge_s")),
            "time to resolve": _secs(inc.get("time_to_resolve_s")),
            "alerts": fmt.count(inc.get("alert_count"))}


def _lifecycle(inc: dict) -> None:
    cols = st.columns(5)
    cols[0].metric("State", inc["state"])
    cols[1].metric("Severity", inc["severity"])
    cols[2].metric("Time to detect", _secs(inc.get("time_to_detect_s")))
    cols[3].metric("Time to acknowledge", _secs(inc.get("time_to_acknowledge_s")))
    cols[4].metric("Time to resolve", _secs(inc.get("time_to_resolve_s")))
    st.markdown(f"**First failing hop:** {_headline(inc)}")
    st.caption(" · ".join(f"{name} {fmt.timestamp(inc.get(name))}" for name in
                          ("started", "detected", "acknowledged", "mitigated", "resolved")))


def _impact(doc: dict) -> None:
    impact = doc.get("impact")
    if not impact:
        return
    tasks, ghost = impact["tasks"], impact["ghost_work"]
    cols = st.columns(4)
    cols[0].metric("Tasks finished", fmt.count(tasks.get("finished")))
    cols[1].metric("Failed or exhausted", fmt.count((tasks.get("failed") or 0)
                                                      + (tasks.get("budget_exhausted") or 0)))
    cols[2].metric("Degraded", fmt.count(tasks.get("degraded")))
    cols[3].metric("Ghost work", _secs(ghost.get("seconds")))
    if impact.get("error_budget"):
        render.table([{"task type": r["task_type"], "tasks": fmt.count(r["tasks"]),
                       "bad": fmt.count(r["bad"]), "budget minutes": f"{r['minutes']:.2f}",
                       "share of period budget": fmt.pct(r.get("budget_share"), 2)}
                      for r in impact["error_budget"]])


def _timeline(doc: dict) -> None:
    st.subheader("Timeline")
    render.table([{"time": fmt.timestamp(e["time"]), "kind": e["kind"],
                   "severity": e["severity"], "source": e["source"], "event": e["title"],
                   "details": e["body"], "traces": " ".join(e["links"]["trace_ids"])}
                  for e in doc["timeline"]])


def _downloads(incident_id: str) -> None:
    cols = st.columns(len(_FORMATS))
    for col, (key, label, mime) in zip(cols, _FORMATS):
        text = data.call("incident_export", incident_id, format=key)
        col.download_button(label, text, file_name=f"{incident_id}-timeline.{key}", mime=mime,
                            key=f"inc_dl_{key}")


def _actions(inc: dict) -> None:
    with st.expander("Acknowledge or add a note"):
        author = st.text_input("Author", key="inc_author")
        if inc.get("acknowledged_at") is None and st.button("Acknowledge", key="inc_ack"):
            data.act("ack_incident", inc["id"], author or "dashboard", source="dashboard")
            st.rerun()
        kind = st.selectbox("Kind", ["note", "change", "mitigated"], key="inc_kind")
        text = st.text_area("Text", key="inc_text")
        if st.button("Add", key="inc_add") and text.strip():
            data.act("note_incident", inc["id"], kind, author or "dashboard", text,
                     source="dashboard")
            st.rerun()


def body() -> None:
    """List incidents; show the chosen one's lifecycle, impact, timeline and exports."""
    state = st.radio("State", ["all", "open", "resolved"], horizontal=True, key="inc_state")
    try:
        answer = data.call("incidents", state=None if state == "all" else state)
    except NotFound:
        st.info("Incidents are not available: this agentsla API has no /api/v1/incidents.",
                icon=":material/notifications_off:")
        return
    incidents = answer.get("incidents", [])
    if not incidents:
        st.success("No incidents.")
        return
    render.table([_row(i) for i in incidents])
    chosen = st.selectbox("Incident", [i["id"] for i in incidents], key="inc_pick",
                          format_func=lambda i: next(f"{x['id']} · {x['title']}"
                                                     for x in incidents if x["id"] == i))
    doc = data.call("incident", chosen)
    inc = doc["incident"]
    st.subheader(inc["title"])
    _lifecycle(inc)
    _impact(doc)
    _downloads(chosen)
    _timeline(doc)
    _actions(inc)


render.page("Incidents", body)
