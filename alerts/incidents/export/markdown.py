"""The Markdown export: a post-mortem in the shape of the Google SRE book's template.

Sections: title, status, summary, impact, root causes (first failing hops), trigger, resolution,
detection, action items (from the findings' fix hints), lessons learned (placeholders to fill)
and the timeline. Strings from spans or people go through `md()`: HTML-escaped and every
Markdown control character backslash-escaped, so `<script>` or `[x](javascript:...)` stays text.
"""

from __future__ import annotations

import html
import re

from agentsla.alerts.incidents.export.text import duration, number, pct
from agentsla.alerts.incidents.report import headline_hop
from agentsla.contract import FailingHop, hop_label

#: Characters that start Markdown syntax mid-line; `_` only at a word's edge (GFM ignores
#: intraword underscores, so snake_case names stay readable).
_MD_SPECIAL = re.compile(r"([\\`*\[\]|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
TODO = "_To be filled in by the review._"


def md(value: object) -> str:
    """Escape a user or span string for Markdown text and table cells (one line)."""
    text = html.escape("" if value is None else str(value), quote=False)
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return " ".join(text.split())


def to_markdown(doc: dict) -> str:
    """Write the post-mortem."""
    inc = doc["incident"]
    parts = [f"# Post-mortem: {md(inc['title'])}", "",
             f"**Incident:** {inc['id']}  ", f"**Status:** {inc['state']}  ",
             f"**Severity:** {inc['severity']}  ",
             f"**Date:** {(inc.get('detected') or '')[:10]}  ",
             f"**Authors:** {TODO}  ", f"**Generated:** {doc['generated_at']} "
             f"(schema {doc['schema']})", ""]
    for section in (_summary, _impact, _root_causes, _trigger, _resolution, _detection,
                    _action_items, _lessons, _timeline):
        parts.extend(section(doc))
        parts.append("")
    return "\n".join(parts)


def _summary(doc: dict) -> list[str]:
    inc = doc["incident"]
    text = (f"{md(inc['title'])}. The impact started {md(inc.get('started') or 'at an unknown time')}"
            f", was detected {inc['detected']} (time to detect "
            f"{duration(inc.get('time_to_detect_s'))}) and "
            + (f"resolved {inc['resolved']} (time to resolve "
               f"{duration(inc.get('time_to_resolve_s'))})." if inc.get("resolved")
               else "is not resolved yet.")
            + f" First failing hop: {md(headline_hop(inc))}.")
    return ["## Summary", "", text]


def _impact(doc: dict) -> list[str]:
    impact = doc.get("impact")
    if not impact:
        return ["## Impact", "", "No impact measured yet (no snapshot was taken)."]
    tasks = impact["tasks"]
    lines = ["## Impact", "",
             f"- Finished tasks in scope: {number(tasks.get('finished'))}; "
             + ", ".join(f"{md(k.replace('_', ' '))} {number(v)}" for k, v in tasks.items()
                         if k not in ("finished", "success")),
             f"- Ghost work: {number(impact['ghost_work']['seconds'])} s and "
             f"{number(impact['ghost_work']['tokens'])} tokens after callers gave up", ""]
    if impact.get("error_budget"):
        lines += ["| task type | tasks | bad | error-budget minutes | share of period budget |",
                  "|---|---|---|---|---|"]
        lines += [f"| {md(r['task_type'])} | {number(r['tasks'])} | {number(r['bad'])} | "
                  f"{number(r['minutes'])} | {pct(r.get('budget_share'))} |"
                  for r in impact["error_budget"]]
    return lines


def _root_causes(doc: dict) -> list[str]:
    rows = doc.get("root_causes") or []
    lines = ["## Root causes", "", "First failing hops of the blamed tasks during the incident:", ""]
    if not rows:
        return lines + ["No blamed tasks were recorded.", "", TODO]
    lines += ["| first failing hop | reason | tasks | share | seconds lost |", "|---|---|---|---|---|"]
    lines += [f"| {md(hop_label(FailingHop.from_row(r), reason=False))} | {md(r.get('ffh_reason'))} | "
              f"{number(r.get('tasks'))} | {pct(r.get('share'))} | {number(r.get('seconds_lost'))} |"
              for r in rows]
    return lines


def _trigger(doc: dict) -> list[str]:
    changes = [e for e in doc["timeline"] if e["kind"] == "change"]
    lines = ["## Trigger", ""]
    first = next((e for e in doc["timeline"] if e["kind"] == "impact_started"), None)
    if first:
        lines.append(f"- First failing span of the impact: {first['time']}")
    lines += [f"- Change {e['time']}: {md(e['body'])} ({md(e['title'])})" for e in changes]
    return lines + ([] if changes else ["- No change marker was posted. " + TODO])


def _resolution(doc: dict) -> list[str]:
    inc = doc["incident"]
    lines = ["## Resolution", ""]
    lines += [f"- Mitigated {e['time']}: {md(e['body'])}" for e in doc["timeline"]
              if e["kind"] == "mitigated"]
    lines.append(f"- Resolved: {md(inc.get('resolved') or 'not yet')}")
    return lines


def _detection(doc: dict) -> list[str]:
    inc = doc["incident"]
    lines = ["## Detection", ""]
    lines += [f"- {a['fired']}: {md(a['severity'])} {md(a['alertname'])} fired "
              f"(first failing hop {md(hop_label(FailingHop.from_json(a.get('first_failing_hop'))))})"
              for a in inc["alerts"]]
    sent = sum(1 for e in doc["timeline"] if e["kind"] == "notification_sent")
    failed = sum(1 for e in doc["timeline"] if e["kind"] == "notification_failed")
    lines.append(f"- Notifications: {sent} sent, {failed} failed; acknowledged "
                 f"{md(inc.get('acknowledged') or 'never')} by {md(inc.get('acknowledged_by') or '-')}"
                 f" (time to acknowledge {duration(inc.get('time_to_acknowledge_s'))})")
    return lines


def _action_items(doc: dict) -> list[str]:
    items = doc.get("action_items") or []
    lines = ["## Action items", "", "| action item | type | owner | hint |", "|---|---|---|---|"]
    lines += [f"| {md(i['title'])} | {md(i.get('source'))} | {TODO} | {md(i.get('hint'))} |"
              for i in items]
    return lines + ([] if items else [f"| {TODO} | | | |"])


def _lessons(doc: dict) -> list[str]:
    return ["## Lessons learned", "", "### What went well", "", TODO, "",
            "### What went wrong", "", TODO, "", "### Where we got lucky", "", TODO]


def _timeline(doc: dict) -> list[str]:
    lines = ["## Timeline", "", "| time (UTC) | kind | source | event | details |",
             "|---|---|---|---|---|"]
    for e in doc["timeline"]:
        links = e.get("links") or {}
        traces = ", ".join(md(t) for t in links.get("trace_ids") or [])
        details = md(e["body"]) + (f" (traces: {traces})" if traces else "")
        lines.append(f"| {e['time']} | {e['kind']} | {md(e['source'])} | "
                     f"{md(e['title'])} | {details} |")
    return lines
