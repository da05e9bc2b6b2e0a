"""Budgets & findings: where the time budget went by hop kind, and the findings with hints."""

from __future__ import annotations

import streamlit as st

from agentsla.dashboard import data, figures, filters, fmt, render, tables
from agentsla.errors import NotFound

TASKS_PAGE = "views/tasks.py"
_SEVERITY_ICONS = {"critical": ":material/error:", "warning": ":material/warning:",
                   "info": ":material/info:"}


def _budget() -> None:
    render.filter_note("/api/v1/budget")
    budget = data.call("budget", **filters.api_params("/api/v1/budget"))
    cols = st.columns(4)
    cols[0].metric("Tasks", fmt.count(budget.get("tasks")))
    cols[1].metric("Average duration", fmt.duration(budget.get("avg_duration_ms")))
    cols[2].metric("Average budget", fmt.duration(budget.get("avg_budget_ms")),
                   help=f"{fmt.count(budget.get('tasks_with_budget'))} tasks carry a budget")
    cols[3].metric("Budget left unused", fmt.pct(budget.get("unused_budget_share")))
    render.chart(figures.budget_waterfall(budget), "budget_waterfall")
    if budget.get("by_hop_kind"):
        render.table(tables.budget_rows(budget["by_hop_kind"]))


def _finding(i: int, finding: dict) -> None:
    hop = finding.get("hop") or {}
    where = fmt.hop(hop.get("kind"), hop.get("name")) if hop else (finding.get("task_type") or "")
    title = f"{fmt.label(finding.get('severity')).upper()} · {fmt.label(finding.get('type'))} · {where}"
    with st.expander(title, icon=_SEVERITY_ICONS.get(finding.get("severity")), expanded=i < 3):
        st.markdown(f"**Fix:** {finding.get('hint') or fmt.MISSING}")
        st.caption(f"Seen {fmt.timestamp(finding.get('first_seen'))} → "
                   f"{fmt.timestamp(finding.get('last_seen'))}"
                   + (f" · rule {finding['rule']}" if finding.get("rule") else ""))
        # one line, not a data grid per finding: the page with 1 h of findings at 10M spans drew
        # in 3.5 s instead of 8.4 s (bench/dashboard.py, warm)
        evidence = tables.finding_evidence(finding.get("evidence") or {})
        if evidence:
            st.markdown("**Evidence:** " + " · ".join(f"{row['evidence']} {row['value']}"
                                                      for row in evidence))
        for example in finding.get("examples") or []:
            if example.get("task_id"):
                st.page_link(TASKS_PAGE, label=f"Example task {example['task_id']}",
                             icon=":material/open_in_new:",
                             query_params={"task": example["task_id"]})


def _findings() -> None:
    st.subheader("Findings")
    render.filter_note("/api/v1/findings", "the findings")
    try:
        answer = data.call_later("findings", **filters.api_params("/api/v1/findings"))
    except data.Pending as waiting:
        render.pending("Findings", waiting)
        return
    except NotFound as exc:
        st.info(f"Findings are not available from this API: {exc.message}.")
        return
    found = answer.get("findings", []) if isinstance(answer, dict) else answer
    if not found:
        st.success("No findings in this window.")
        return
    counts = {}
    for item in found:
        counts[item.get("severity")] = counts.get(item.get("severity"), 0) + 1
    st.caption(" · ".join(f"{fmt.count(n)} {s}" for s, n in counts.items()))
    for i, finding in enumerate(found):
        _finding(i, finding)


def body() -> None:
    """Draw the budget waterfall and the findings."""
    # the findings take longest: asked first, computed while the waterfall is fetched and drawn
    data.start_later("findings", **filters.api_params("/api/v1/findings"))
    st.subheader("Where the budget went")
    _budget()
    _findings()


render.page("Budgets & findings", body, charts=True)
