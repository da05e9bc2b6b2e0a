"""Build Plotly figures from query API JSON: pure functions, no Streamlit, no I/O.

Figures set no template: pages show them with render.chart's, and its text follows the light or
dark theme of the app. Colours are mid-tone so lines and bars read on both backgrounds. Trace
types are those of the partial plotly.js bundle the dashboard loads (scatter, bar, heatmap).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Iterable, Mapping, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from agentsla.dashboard import fmt

OUTCOME_COLORS = {
    "success": "#2e9e5b", "degraded": "#e69f00", "failed": "#d64545",
    "budget_exhausted": "#9c5fd1", "rejected": "#8c8c8c", "lost": "#4c8ed9",
    "cancelled": "#b5a27a", "in_progress": "#5fb3b3",
}
HOP_COLORS = {
    "gateway": "#4c8ed9", "scheduler": "#8c8c8c", "queue": "#b5a27a", "agent": "#5fb3b3",
    "model": "#9c5fd1", "tool": "#e69f00", "cache": "#2e9e5b", "storage": "#c97b5a",
    "other": "#a0a0a0",
}
FAIL_COLOR = "#d64545"
RATED = ("success", "degraded", "failed", "budget_exhausted", "rejected", "lost")
_MARGIN = dict(l=10, r=10, t=40, b=10)


def _time(row: Mapping) -> datetime:
    return datetime.fromtimestamp(row["bucket_ns"] / 1e9, tz=timezone.utc)


def _empty(title: str, message: str) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_layout(title=title, xaxis_visible=False, yaxis_visible=False, height=260,
                      margin=_MARGIN)
    return fig


def success_over_time(series: Sequence[Mapping]) -> go.Figure:
    """Plot task success beside gateway success, degraded and budget-exhausted rates per bucket."""
    if not series:
        return _empty("Success over time", "No tasks in this window")
    x = [_time(r) for r in series]
    fig = go.Figure()
    lines = (("success_rate", "task success", OUTCOME_COLORS["success"], "solid"),
             ("gateway_success_rate", "gateway success", HOP_COLORS["gateway"], "dash"),
             ("degraded_rate", "degraded (fallback)", OUTCOME_COLORS["degraded"], "solid"),
             ("budget_exhausted_rate", "budget exhausted", OUTCOME_COLORS["budget_exhausted"],
              "solid"))
    for key, name, color, dash in lines:
        fig.add_scatter(x=x, y=[r.get(key) for r in series], name=name, mode="lines+markers",
                        line=dict(color=color, dash=dash), connectgaps=False,
                        hovertemplate="%{y:.2%}<extra>" + name + "</extra>")
    fig.update_layout(title="Task success vs gateway success", yaxis_tickformat=".0%",
                      yaxis_range=[0, 1.02], height=320, margin=_MARGIN, hovermode="x unified",
                      legend=dict(orientation="h", y=-0.2))
    return fig


def traffic_over_time(series: Sequence[Mapping]) -> go.Figure:
    """Stack the finished tasks of each bucket by outcome (bars), in-progress tasks as a line."""
    if not series:
        return _empty("Traffic", "No tasks in this window")
    x = [_time(r) for r in series]
    fig = go.Figure()
    for outcome in (*RATED, "cancelled"):
        values = [r.get(outcome) or 0 for r in series]
        if any(values):
            fig.add_bar(x=x, y=values, name=fmt.label(outcome),
                        marker_color=OUTCOME_COLORS[outcome])
    fig.update_layout(title="Finished tasks by outcome", barmode="stack", height=320,
                      margin=_MARGIN, legend=dict(orientation="h", y=-0.2), bargap=0.1)
    return fig


def burn_rates(slos: Sequence[Mapping]) -> go.Figure:
    """Group each task type's error-budget burn rates by window; 1× spends the budget exactly."""
    if not slos:
        return _empty("Burn rates", "No SLOs: no finished tasks and none configured")
    fig = go.Figure()
    windows = list((slos[0].get("burn_rates") or {}).keys())
    for slo in slos:
        rates = slo.get("burn_rates") or {}
        name = slo.get("task_type") or "(no type)"
        fig.add_bar(x=windows, y=[rates.get(w) for w in windows], name=name,
                    hovertemplate="%{x}: %{y:.2f}×<extra>" + name + "</extra>")
    fig.add_hline(y=1, line_dash="dot", line_color=FAIL_COLOR, annotation_position="top left",
                  annotation_text="1× = budget spent in exactly one period")
    fig.update_layout(title="Error-budget burn rate by window", barmode="group", height=320,
                      margin=_MARGIN, yaxis_title="burn rate (×)", legend=dict(orientation="h", y=-0.2))
    return fig


def cause_label(row: Mapping) -> str:
    """Label a root-cause row as `kind name · reason`."""
    return fmt.hop(row.get("ffh_kind"), row.get("ffh_name"), row.get("ffh_reason"))


def pareto(rows: Sequence[Mapping]) -> go.Figure:
    """Draw the first-failing-hop Pareto: tasks per cause (bars) and cumulative share (line)."""
    if not rows:
        return _empty("Root causes", "No failed or degraded tasks in this window")
    labels = [cause_label(r) for r in rows]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_bar(x=labels, y=[r["tasks"] for r in rows], name="tasks", marker_color=FAIL_COLOR,
                text=[fmt.count(r["tasks"]) for r in rows], textposition="outside",
                customdata=[fmt.pct(r.get("share")) for r in rows],
                hovertemplate="%{x}<br>%{y} tasks (%{customdata})<extra></extra>")
    fig.add_scatter(x=labels, y=[r.get("cumulative_share") for r in rows], name="cumulative share",
                    mode="lines+markers", line_color=HOP_COLORS["gateway"], secondary_y=True,
                    hovertemplate="%{y:.1%} cumulative<extra></extra>")
    fig.update_yaxes(title_text="blamed tasks", secondary_y=False)
    fig.update_yaxes(title_text="cumulative share", tickformat=".0%", range=[0, 1.05], dtick=0.25,
                     secondary_y=True)
    fig.update_layout(title="First failing hop (Pareto)", height=380, margin=_MARGIN,
                      showlegend=False)
    return fig


def causes_over_time(series: Sequence[Mapping], top: int = 8) -> go.Figure:
    """Stack blamed tasks per bucket by cause; causes beyond the `top` busiest become `other`."""
    if not series:
        return _empty("Root causes over time", "No failed or degraded tasks in this window")
    totals: dict[str, int] = {}
    for row in series:
        totals[cause_label(row)] = totals.get(cause_label(row), 0) + row["tasks"]
    kept = sorted(totals, key=lambda k: -totals[k])[:top]
    buckets = sorted({r["bucket_ns"] for r in series})
    x = [datetime.fromtimestamp(b / 1e9, tz=timezone.utc) for b in buckets]
    grid: dict[str, dict[int, int]] = {}
    for row in series:
        name = cause_label(row) if cause_label(row) in kept else "other causes"
        grid.setdefault(name, {}).setdefault(row["bucket_ns"], 0)
        grid[name][row["bucket_ns"]] += row["tasks"]
    fig = go.Figure()
    for name in [*kept, "other causes"]:
        if name in grid:
            fig.add_bar(x=x, y=[grid[name].get(b, 0) for b in buckets], name=name)
    fig.update_layout(title="First failing hops over time", barmode="stack", height=340,
                      margin=_MARGIN, legend=dict(orientation="h", y=-0.25))
    return fig


def hop_label(row: Mapping) -> str:
    """Label a hop row as `kind name`."""
    return fmt.hop(row.get("hop_kind"), row.get("hop_name"))


def hop_latency(hops: Sequence[Mapping], top: int = 20) -> go.Figure:
    """Show p50, p95 and p99 latency of the busiest hops as grouped horizontal bars (log scale)."""
    rows = sorted(hops, key=lambda r: -(r.get("calls") or 0))[:top]
    if not rows:
        return _empty("Hop latency", "No spans ended in this window")
    labels = [hop_label(r) for r in rows][::-1]
    fig = go.Figure()
    for key, name, color in (("latency_p50_ms", "p50", "#5fb3b3"),
                             ("latency_p95_ms", "p95", "#e69f00"),
                             ("latency_p99_ms", "p99", FAIL_COLOR)):
        values = [r.get(key) for r in rows][::-1]
        fig.add_bar(y=labels, x=values, name=name, orientation="h", marker_color=color,
                    customdata=[fmt.duration(v) for v in values],
                    hovertemplate="%{y} " + name + ": %{customdata}<extra></extra>")
    fig.update_layout(title="Latency percentiles per hop", barmode="group",
                      height=max(300, 60 + 42 * len(rows)), margin=_MARGIN,
                      xaxis=dict(type="log", title="ms (log scale)"),
                      legend=dict(orientation="h", y=-0.12))
    return fig


def hop_failure_rates(hops: Sequence[Mapping], top: int = 20) -> go.Figure:
    """Show timeout, 429 and circuit-open rates per hop, for hops with any of them."""
    rows = [r for r in hops if (r.get("timeouts") or r.get("rate_limited") or r.get("circuit_open"))]
    rows = sorted(rows, key=lambda r: -(r.get("errors") or 0))[:top]
    if not rows:
        return _empty("Hop failures", "No timeouts, 429s or open circuits in this window")
    labels = [hop_label(r) for r in rows][::-1]
    fig = go.Figure()
    for key, name, color in (("timeout_rate", "timeout", FAIL_COLOR),
                             ("rate_limited_rate", "429 rate limited", "#e69f00"),
                             ("circuit_open_rate", "circuit open", "#9c5fd1")):
        values = [r.get(key) or 0 for r in rows][::-1]
        fig.add_bar(y=labels, x=values, name=name, orientation="h", marker_color=color,
                    hovertemplate="%{y} " + name + ": %{x:.2%}<extra></extra>")
    fig.update_layout(title="Timeout, 429 and circuit-open rates per call", barmode="group",
                      height=max(280, 60 + 42 * len(rows)), margin=_MARGIN,
                      xaxis_tickformat=".0%", legend=dict(orientation="h", y=-0.15))
    return fig


#: Metrics of the hop heatmap: series key -> (label, colorbar tick format).
HEATMAP_METRICS = {"error_rate": ("Error rate", ".0%"), "latency_p95_ms": ("p95 latency", None)}


def hop_heatmap(series: Sequence[Mapping], value_key: str = "latency_p95_ms",
                title: str | None = None, window: Mapping | None = None) -> go.Figure:
    """Draw a heatmap of one hop metric (rows: hops, busiest on top; columns: buckets).

    `series` is /api/v1/hops's sparse series; with the answer's `window` (from_ns, to_ns,
    step_s), every bucket of the window is a column, so quiet buckets show as gaps.
    """
    label, tick = HEATMAP_METRICS.get(value_key, (value_key, None))
    title = title or f"{label} per hop over time"
    if not series:
        return _empty(title, "No hop series in this window")
    calls: dict[str, int] = {}
    for row in series:
        calls[hop_label(row)] = calls.get(hop_label(row), 0) + (row.get("calls") or 0)
    hops = sorted(calls, key=lambda h: (-calls[h], h))
    buckets = _buckets(series, window)
    cells = {(hop_label(r), r["bucket_ns"]): r.get(value_key) for r in series}
    z = [[cells.get((h, b)) for b in buckets] for h in hops]
    x = [datetime.fromtimestamp(b / 1e9, tz=timezone.utc) for b in buckets]
    hover = "%{z:.1%}" if tick == ".0%" else "%{z:,.0f} ms"
    fig = go.Figure(go.Heatmap(z=z, x=x, y=hops, colorscale="YlOrRd", hoverongaps=False,
                               colorbar=dict(title=label, tickformat=tick),
                               hovertemplate="%{y}<br>%{x}: " + hover + "<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(title=title, height=max(260, 80 + 28 * len(hops)), margin=_MARGIN)
    return fig


def _buckets(series: Sequence[Mapping], window: Mapping | None) -> list[int]:
    seen = sorted({r["bucket_ns"] for r in series})
    step_s = (window or {}).get("step_s")
    if not step_s:
        return seen
    step = round(step_s * 1e9)
    every = range(window["from_ns"], window["to_ns"], step)
    return list(every) if len(every) <= 2000 and set(seen) <= set(every) else seen


def budget_waterfall(budget: Mapping) -> go.Figure:
    """Show where the average task's time went by hop kind (a waterfall to the task duration).

    Each hop kind's bar floats on the sum of those before it; with budgets present, the unused
    budget is a last bar on top of the duration, so the bars reach the budget. Drawn as bars
    with a base: the dashboard's plotly.js bundle has no waterfall trace.
    """
    kinds = budget.get("by_hop_kind") or []
    if not kinds:
        return _empty("Where the budget went", "No finished tasks with a root in this window")
    x = [k["hop_kind"] for k in kinds]
    y = [k.get("avg_ms_per_task") or 0.0 for k in kinds]
    base = [sum(y[:i]) for i in range(len(y))]
    colors = [HOP_COLORS["model"]] * len(kinds)
    text = [fmt.duration(v) for v in y]
    x.append("task duration (avg)")
    base.append(0.0)
    y.append(sum(y))
    colors.append(HOP_COLORS["gateway"])
    text.append("")
    avg_budget, avg_duration = budget.get("avg_budget_ms"), budget.get("avg_duration_ms")
    if avg_budget and avg_duration is not None and avg_budget > avg_duration:
        x.append("unused budget")
        base.append(y[-1])
        y.append(avg_budget - avg_duration)
        colors.append(HOP_COLORS["model"])
        text.append(fmt.duration(y[-1]))
    fig = go.Figure(go.Bar(x=x, y=y, base=base, marker_color=colors, text=text,
                           textposition="outside", customdata=[fmt.duration(v) for v in y],
                           hovertemplate="%{x}: %{customdata}<extra></extra>"))
    fig.update_layout(title="Where the time of an average task went (self time by hop kind)",
                      yaxis_title="ms per task", height=380, margin=_MARGIN, showlegend=False)
    return fig


def flatten_spans(spans: Iterable[Mapping], depth: int = 0) -> list[tuple[int, Mapping]]:
    """Walk a span tree depth first, children in start order: [(depth, span), ...]."""
    out: list[tuple[int, Mapping]] = []
    for span in sorted(spans, key=lambda s: (s.get("start_ns") or 0, s.get("span_id") or "")):
        out.append((depth, span))
        out.extend(flatten_spans(span.get("children") or [], depth + 1))
    return out


def span_label(depth: int, span: Mapping) -> str:
    """Label a span row of the waterfall: indented `kind name`, marked for retries, fallbacks
    and a queue consumer's entry nested under its producer by a link (`via_link`)."""
    text = fmt.hop(span.get("hop_kind"), span.get("hop_name") or span.get("name"))
    attempt = span.get("retry_attempt")
    if attempt:
        text += f" ↻ retry {attempt}"
    if span.get("fallback_used"):
        text += " ⇢ fallback"
    if span.get("via_link"):
        text += " ⤷ via link"
    return "\u2003" * depth + text


def _span_color(span: Mapping, failing: set[str]) -> str:
    if span.get("span_id") in failing:
        return FAIL_COLOR
    return HOP_COLORS.get(span.get("hop_kind") or "other", HOP_COLORS["other"])


def trace_waterfall(task: Mapping) -> go.Figure:
    """Draw a task's spans as a Gantt-style waterfall (ms from the task start).

    The first failing hop is red with a thick outline; failed spans are hatched; retries
    (↻), fallbacks (⇢) and consumers joined by a link (⤷) are marked in the labels; the task
    budget is a vertical line and each span's own `budget.remaining_ms` a diamond at the
    deadline it saw.
    """
    rows = flatten_spans(task.get("spans") or [])
    if not rows:
        return _empty("Trace", "This task has no spans stored")
    t0 = min(s["start_ns"] for _, s in rows if s.get("start_ns") is not None)
    ffh = task.get("first_failing_hop") or {}
    failing = {ffh.get("span_id"), ffh.get("detail_span_id")} - {None}
    labels = [f"{span_label(d, s)} #{i}" for i, (d, s) in enumerate(rows)]
    starts = [((s.get("start_ns") or t0) - t0) / 1e6 for _, s in rows]
    widths = [max(s.get("duration_ms") or 0.0, 0.0) for _, s in rows]
    fig = go.Figure()
    fig.add_bar(
        y=labels, x=widths, base=starts, orientation="h",
        marker=dict(color=[_span_color(s, failing) for _, s in rows],
                    line=dict(width=[3 if s.get("span_id") in failing else 0 for _, s in rows],
                              color=FAIL_COLOR),
                    pattern=dict(shape=["/" if s.get("is_error") else "" for _, s in rows])),
        customdata=[[fmt.duration(w), fmt.label(s.get("error_type")) if s.get("error_type")
                     else (s.get("status_code") or ""), s.get("span_id")] for w, (_, s) in
                    zip(widths, rows)],
        hovertemplate="%{y}<br>start +%{base:.0f} ms, %{customdata[0]}<br>%{customdata[1]}"
                      "<br>span %{customdata[2]}<extra></extra>",
        name="spans", showlegend=False)
    _mark_deadlines(fig, rows, labels, starts)
    _mark_budget_and_blame(fig, task, rows, labels, t0, failing)
    fig.update_yaxes(autorange="reversed", tickmode="array", tickvals=labels,
                     ticktext=[lb.rsplit(" #", 1)[0] for lb in labels])
    fig.update_layout(title="Trace waterfall", xaxis_title="ms since the task started",
                      height=max(260, 70 + 26 * len(rows)), margin=_MARGIN, bargap=0.25)
    return fig


def _mark_budget_and_blame(fig: go.Figure, task: Mapping, rows, labels, t0: int,
                           failing: set) -> None:
    """Draw the task budget as a dashed line and point at the first failing hop's end."""
    budget = task.get("budget_total_ms")
    if budget:
        fig.add_vline(x=budget, line_dash="dash", line_color=FAIL_COLOR,
                      annotation_text=f"budget {fmt.duration(budget)}")
    for label, (_, s) in zip(labels, rows):
        if s.get("span_id") in failing:
            fig.add_annotation(y=label, x=((s.get("end_ns") or s["start_ns"]) - t0) / 1e6,
                               text="first failing hop", showarrow=True, arrowhead=2,
                               ax=40, ay=0, font_color=FAIL_COLOR)
            return


def _mark_deadlines(fig: go.Figure, rows, labels, starts) -> None:
    """Add a diamond where each span's own remaining budget would run out."""
    pts = [(lb, start + s["budget_remaining_ms"]) for lb, start, (_, s) in zip(labels, starts, rows)
           if s.get("budget_remaining_ms") is not None]
    if pts:
        fig.add_scatter(y=[p[0] for p in pts], x=[p[1] for p in pts], mode="markers+lines",
                        marker=dict(symbol="diamond", size=9, color=OUTCOME_COLORS["degraded"]),
                        line=dict(dash="dot", width=1, color=OUTCOME_COLORS["degraded"]),
                        name="deadline seen by the span (start + budget.remaining_ms)",
                        hovertemplate="deadline +%{x:.0f} ms<extra></extra>")
        fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.0, x=1,
                                      xanchor="right"))
