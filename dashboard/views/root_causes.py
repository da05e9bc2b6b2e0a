"""Root causes: the first-failing-hop Pareto, its change over time, example tasks per cause."""

from __future__ import annotations

import streamlit as st

from agentsla.dashboard import data, figures, filters, fmt, render, tables

TASKS_PAGE = "views/tasks.py"


def _examples(cause: dict) -> None:
    st.subheader(f"Example tasks: {figures.cause_label(cause)}")
    ids = cause.get("example_task_ids") or []
    if not ids:
        st.caption("No example tasks were returned for this cause.")
    for task_id in ids:
        st.page_link(TASKS_PAGE, label=f"Task {task_id}", icon=":material/open_in_new:",
                     query_params={"task": task_id})
    more = {k: v for k, v in (("ffh_kind", cause.get("ffh_kind")),
                              ("ffh_name", cause.get("ffh_name"))) if v}
    if more:
        st.page_link(TASKS_PAGE, label="All tasks with this first failing hop",
                     icon=":material/list:", query_params=more)


def body() -> None:
    """Draw the Pareto, the table (select a row for examples) and the series."""
    f = filters.current()
    render.filter_note("/api/v1/root-causes")
    answer = data.call("root_causes", **filters.api_params("/api/v1/root-causes", step=f.step))
    causes = answer.get("root_causes") or []
    st.metric("Blamed tasks (failed, degraded, budget exhausted, rejected)",
              fmt.count(answer.get("blamed_tasks")))
    if not causes:
        st.info("No failed or degraded tasks in this window: nothing to blame.")
        return
    render.chart(figures.pareto(causes), "pareto")
    st.caption("Select a row to see example tasks; the first row is shown until you do.")
    event = st.dataframe(tables.root_cause_rows(causes), hide_index=True, on_select="rerun",
                         selection_mode="single-row", key="causes_table")
    rows = event.selection.rows if event is not None and hasattr(event, "selection") else []
    _examples(causes[rows[0]] if rows else causes[0])
    render.chart(figures.causes_over_time(answer.get("series") or []), "causes_series")


render.page("Root causes", body, charts=True)
