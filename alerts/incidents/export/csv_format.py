"""The CSV export: one row per timeline entry, safe to open in a spreadsheet."""

from __future__ import annotations

import csv
import io
import json

COLUMNS = ("id", "time", "kind", "severity", "source", "title", "body", "labels", "task_ids",
           "trace_ids")
#: A cell starting with one of these is a formula to a spreadsheet (CSV injection; OWASP).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def to_csv(doc: dict) -> str:
    """Write the timeline as CSV with a header row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for entry in doc["timeline"]:
        links = entry.get("links") or {}
        writer.writerow([entry["id"], entry["time"], entry["kind"], entry["severity"],
                         _cell(entry["source"]), _cell(entry["title"]), _cell(entry["body"]),
                         _cell(json.dumps(entry.get("labels") or {}, sort_keys=True)),
                         _cell(" ".join(links.get("task_ids") or [])),
                         _cell(" ".join(links.get("trace_ids") or []))])
    return out.getvalue()


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text
