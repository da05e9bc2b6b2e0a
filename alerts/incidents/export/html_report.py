"""The HTML export: one self-contained page (inline CSS and SVG, no script, no network).

Every string from spans or people passes through html.escape; the page carries a
Content-Security-Policy that forbids scripts, as a second line of defence.
"""

from __future__ import annotations

import time
from html import escape

from agentsla.alerts.incidents.export import svg
from agentsla.alerts.incidents.export.text import duration, number, pct
from agentsla.alerts.incidents.report import headline_hop
from agentsla.contract import FailingHop, hop_label

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:980px;color:#111827}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:1.8rem;border-bottom:1px solid #e5e7eb}
table{border-collapse:collapse;width:100%;font-size:13px}
td,th{border:1px solid #e5e7eb;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f9fafb}.critical{color:#b91c1c}.warning{color:#b45309}.muted{color:#6b7280}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px}dt{font-weight:600}
"""
_LIFECYCLE = (("started", "Impact started"), ("detected", "Detected"),
              ("acknowledged", "Acknowledged"), ("mitigated", "Mitigated"),
              ("resolved", "Resolved"), ("closed", "Closed"))


def e(value: object) -> str:
    """Escape any value for HTML text or attribute content."""
    return escape("" if value is None else str(value), quote=True)


def to_html(doc: dict) -> str:
    """Write the report page."""
    inc = doc["incident"]
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
             'style-src \'unsafe-inline\'; img-src data:">',
             f"<title>{e(inc['id'])}: {e(inc['title'])}</title><style>{_CSS}</style></head><body>",
             f"<h1>{e(inc['id'])}: {e(inc['title'])}</h1>",
             f"<p class=\"muted\">{e(inc['state'])} · {e(inc['severity'])} · generated "
             f"{e(doc['generated_at'])} · schema {e(doc['schema'])}</p>"]
    parts += _lifecycle(inc) + _charts(doc) + _impact(doc) + _causes(doc) + _actions(doc)
    parts += _timeline(doc) + ["</body></html>"]
    return "\n".join(parts)


def _lifecycle(inc: dict) -> list[str]:
    rows = [f"<dt>{label}</dt><dd>{e(inc.get(key) or '—')}</dd>" for key, label in _LIFECYCLE]
    rows += [f"<dt>Time to {what}</dt><dd>{duration(inc.get(f'time_to_{what}_s'))}</dd>"
             for what in ("detect", "acknowledge", "resolve")]
    rows.append(f"<dt>First failing hop</dt><dd>{e(headline_hop(inc))}</dd>")
    alerts = "".join(f"<li>{e(a['fired'])} {e(a['severity'])} {e(a['alertname'])} "
                     f"{e(a['labels'])}</li>" for a in inc["alerts"])
    return ["<h2>Lifecycle</h2>", f"<dl>{''.join(rows)}</dl>", f"<ul>{alerts}</ul>"]


def _charts(doc: dict) -> list[str]:
    series = doc.get("series") or []
    inc = doc["incident"]
    xs = [p["at"] for p in series]
    markers = [(inc[f"{k}_at"], label) for k, label in _LIFECYCLE if inc.get(f"{k}_at")]
    rates = svg.line_chart("Task rates in the incident's scope", xs,
                           {"success": [p.get("success_rate") for p in series],
                            "budget exhausted": [p.get("budget_exhausted_rate") for p in series],
                            "fallback": [p.get("fallback_rate") for p in series]},
                           pct, _clock, markers)
    burn = svg.line_chart("Error-budget burn rate", xs,
                          {"burn rate": [p.get("burn_rate") for p in series]},
                          lambda v: f"{v:.3g}x", _clock, markers)
    causes = doc.get("root_causes") or []
    pareto = svg.bar_chart("First failing hops (tasks)",
                           [hop_label(FailingHop.from_row(c)) for c in causes],
                           [float(c.get("tasks") or 0) for c in causes], number)
    return ["<h2>Charts</h2>", f"<figure>{rates}</figure>", f"<figure>{burn}</figure>",
            f"<figure>{pareto}</figure>"]


def _impact(doc: dict) -> list[str]:
    impact = doc.get("impact")
    if not impact:
        return ["<h2>Impact</h2>", "<p>No impact measured yet.</p>"]
    tasks = "".join(f"<tr><td>{e(k.replace('_', ' '))}</td><td>{number(v)}</td></tr>"
                    for k, v in impact["tasks"].items())
    budget = "".join(f"<tr><td>{e(r['task_type'])}</td><td>{number(r['tasks'])}</td>"
                     f"<td>{number(r['bad'])}</td><td>{number(r['minutes'])}</td>"
                     f"<td>{pct(r.get('budget_share'))}</td></tr>" for r in impact["error_budget"])
    ghost = impact["ghost_work"]
    return ["<h2>Impact</h2>", f"<table><tr><th>tasks</th><th>count</th></tr>{tasks}</table>",
            "<p></p><table><tr><th>task type</th><th>tasks</th><th>bad</th>"
            f"<th>error-budget minutes</th><th>share of period budget</th></tr>{budget}</table>",
            f"<p>Ghost work: {number(ghost['seconds'])} s, {number(ghost['tokens'])} tokens, "
            f"{number(ghost['spans'])} spans after callers gave up.</p>"]


def _causes(doc: dict) -> list[str]:
    rows = "".join(f"<tr><td>{e(hop_label(FailingHop.from_row(c), reason=False))}</td>"
                   f"<td>{e(c.get('ffh_reason'))}</td><td>{number(c.get('tasks'))}</td>"
                   f"<td>{pct(c.get('share'))}</td><td>{e(', '.join(c.get('example_task_ids') or []))}"
                   "</td></tr>" for c in doc.get("root_causes") or [])
    return ["<h2>Root causes</h2>", "<table><tr><th>first failing hop</th><th>reason</th>"
            f"<th>tasks</th><th>share</th><th>example tasks</th></tr>{rows}</table>"]


def _actions(doc: dict) -> list[str]:
    items = "".join(f"<li><strong>{e(i['title'])}</strong> — {e(i.get('hint'))}</li>"
                    for i in doc.get("action_items") or [])
    return ["<h2>Action items</h2>", f"<ul>{items or '<li>none suggested</li>'}</ul>"]


def _timeline(doc: dict) -> list[str]:
    rows = []
    for entry in doc["timeline"]:
        links = entry.get("links") or {}
        ids = " ".join(links.get("trace_ids") or links.get("task_ids") or [])
        rows.append(f"<tr class=\"{e(entry['severity'])}\"><td>{e(entry['time'])}</td>"
                    f"<td>{e(entry['kind'])}</td><td>{e(entry['source'])}</td>"
                    f"<td>{e(entry['title'])}</td><td>{e(entry['body'])}</td>"
                    f"<td>{e(ids)}</td></tr>")
    return ["<h2>Timeline</h2>", "<table><tr><th>time (UTC)</th><th>kind</th><th>source</th>"
            f"<th>event</th><th>details</th><th>traces</th></tr>{''.join(rows)}</table>"]


def _clock(at: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(at))
