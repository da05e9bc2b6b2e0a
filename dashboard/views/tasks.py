"""Task explorer: find tasks by id, trace id, outcome and type; a trace waterfall per task,
and what is wrong with it (its findings)."""

from __future__ import annotations

import streamlit as st

from agentsla.commands.findings import evidence_summary
from agentsla.contract import OUTCOMES
from agentsla.dashboard import data, figures, filters, fmt, render, tables
from agentsla.errors import NotFound

ANY = "any outcome"
TASKS_PAGE = "views/tasks.py"


def _url_bound(key: str, default: str = "") -> None:
    """Let the URL's `key` win over the widget state when the URL changed (a followed link)."""
    url_value = st.query_params.get(key, default)
    seen_key = f"_tx_url_{key}"
    if st.session_state.get(seen_key) != url_value or f"tx_{key}" not in st.session_state:
        st.session_state[f"tx_{key}"] = url_value
        st.session_state[seen_key] = url_value


def _to_url(key: str, value: str, default: str = "") -> None:
    if value and value != default:
        st.query_params[key] = value
    else:
        st.query_params.pop(key, None)
    st.session_state[f"_tx_url_{key}"] = value if value != default else default


def _search() -> tuple[str, str, str]:
    for key, default in (("task", ""), ("trace", ""), ("outcome", ANY)):
        _url_bound(key, default)
    cols = st.columns([3, 3, 2])
    task_id = cols[0].text_input("Task id", key="tx_task").strip()
    trace_id = cols[1].text_input("Trace id", key="tx_trace").strip()
    outcome = cols[2].selectbox("Outcome", [ANY, *OUTCOMES], key="tx_outcome",
                                format_func=lambda o: fmt.label(o) if o != ANY else o)
    _to_url("task", task_id)
    _to_url("trace", trace_id)
    _to_url("outcome", outcome, ANY)
    return task_id, trace_id, outcome


def _span_attributes(spans: list) -> None:
    rows = figures.flatten_spans(spans)
    with st.expander("Span attributes", icon=":material/data_object:"):
        labels = [f"{i}: {figures.span_label(0, s)} ({s.get('span_id')})"
                  for i, (_, s) in enumerate(rows)]
        choice = st.selectbox("Span", range(len(rows)), format_func=labels.__getitem__,
                              key="tx_span")
        span = rows[choice][1]
        st.json(tables.span_summary(span))
        for part in ("attributes", "resource", "events", "links"):
            if span.get(part):
                st.markdown(f"**{part}**")
                st.json(span[part], expanded=part == "attributes")


def _task(task_id: str) -> None:
    data.start_later("findings", task_id=task_id)  # the slowest answer of the page, drawn last
    try:
        task = data.call("task", task_id)
    except NotFound as exc:
        st.warning(exc.message)
        return
    ffh = task.get("first_failing_hop") or {}
    cols = st.columns(5)
    cols[0].metric("Outcome", fmt.label(task.get("outcome")))
    cols[1].metric("Duration", fmt.duration(task.get("duration_ms")))
    cols[2].metric("Budget", fmt.duration(task.get("budget_total_ms")))
    cols[3].metric("Budget used", fmt.pct(task.get("budget_used_ratio")))
    cols[4].metric("Retries", fmt.count(task.get("retries")))
    if ffh:
        st.markdown(f"**First failing hop:** :red[{fmt.hop(ffh.get('kind'), ffh.get('name'))}] "
                    f"· reason **{fmt.label(ffh.get('reason'))}**")
    st.caption(f"Type {task.get('task_type') or fmt.MISSING} · tenant "
               f"{task.get('tenant_id') or fmt.MISSING} · service "
               f"{task.get('service_name') or fmt.MISSING} · gateway HTTP "
               f"{task.get('http_status') or fmt.MISSING} · started {fmt.timestamp(task.get('start'))}")
    if task.get("trace_id"):
        st.page_link(TASKS_PAGE, label=f"Trace {task['trace_id']}", icon=":material/account_tree:",
                     query_params={"trace": task["trace_id"]})
    render.chart(figures.trace_waterfall(task), "task_waterfall")
    if task.get("spans_truncated"):
        st.warning("This task has more spans than the API returns; the waterfall is partial.")
    _span_attributes(task.get("spans") or [])
    _findings(task_id)


def _findings(task_id: str) -> None:
    """List what the findings say is wrong with this task (GET /api/v1/findings?task_id=)."""
    st.markdown("**Findings**")
    try:
        found = data.call_later("findings", task_id=task_id).get("findings") or []
    except data.Pending as waiting:
        render.pending("This task's findings", waiting)
        return
    except NotFound as exc:
        st.info(f"Findings are not available for this task: {exc.message}.")
        return
    if not found:
        st.caption("No findings for this task.")
        return
    render.table([{"severity": fmt.label(f.get("severity")),
                   "finding": f"{fmt.label(f.get('type'))} ({f.get('rule')})",
                   "hop": fmt.hop((f.get("hop") or {}).get("kind"), (f.get("hop") or {}).get("name"))
                   if f.get("hop") else (f.get("task_type") or fmt.MISSING),
                   "evidence": evidence_summary(f.get("evidence") or {}),
                   "fix": f.get("hint") or fmt.MISSING} for f in found])


def _trace(trace_id: str) -> None:
    try:
        trace = data.call("trace", trace_id)
    except NotFound as exc:
        st.warning(exc.message)
        return
    for task_id in trace.get("task_ids") or []:
        st.page_link(TASKS_PAGE, label=f"Task {task_id}", icon=":material/open_in_new:",
                     query_params={"task": task_id})
    render.chart(figures.trace_waterfall(trace), "trace_waterfall")
    _span_attributes(trace.get("spans") or [])


def _list(outcome: str) -> None:
    render.filter_note("/api/v1/tasks")
    extra = {"outcome": None if outcome == ANY else outcome,
             "ffh_kind": st.query_params.get("ffh_kind"), "ffh_name": st.query_params.get("ffh_name")}
    if extra["ffh_kind"] or extra["ffh_name"]:
        st.caption(f"First failing hop: {fmt.hop(extra['ffh_kind'], extra['ffh_name'])}")
    answer = data.call("tasks", **filters.api_params("/api/v1/tasks", limit=200, **extra))
    tasks = answer.get("tasks") or []
    if not tasks:
        st.info("No tasks match in this window.")
        return
    st.caption(f"{fmt.count(len(tasks))} newest tasks; select one to open its trace waterfall.")
    # a fresh key after each pick, so coming back to the list does not re-open the same task
    generation = st.session_state.get("_tx_table_gen", 0)
    event = st.dataframe(tables.task_rows(tasks), hide_index=True, on_select="rerun",
                         selection_mode="single-row", key=f"tx_table_{generation}")
    rows = event.selection.rows if event is not None and hasattr(event, "selection") else []
    if rows:
        st.session_state["_tx_table_gen"] = generation + 1
        st.query_params["task"] = tasks[rows[0]]["task_id"]
        st.rerun()


def body() -> None:
    """Show one task, one trace, or the matching tasks."""
    task_id, trace_id, outcome = _search()
    if task_id:
        _task(task_id)
    elif trace_id:
        _trace(trace_id)
    else:
        _list(outcome)


# a task or a trace in the URL draws its waterfall: start loading plotly.js; the list has no chart
render.page("Task explorer", body,
            charts=bool(st.query_params.get("task") or st.query_params.get("trace")))
