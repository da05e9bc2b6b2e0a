"""GET /api/v1/findings: the findings whose evidence ended in the window (from/to/window, kind;
widened to whole minutes, as the answer's `window` says), or those of one task (task_id, or
trace_id: "what is wrong with this task?").

`findings_answer(store, ask)` follows api/app.py's Endpoint convention (it runs in a worker
thread with its own read store; errors are AgentslaError, turned into statuses by the API).
"""

from __future__ import annotations

from dataclasses import replace

from agentsla.contract import FINDING_TYPES
from agentsla.queries.findings import check_kind, find_findings
from agentsla.queries.findings.evidence import whole_minutes
from agentsla.queries.store import ReadStore

#: Query parameters of the route (the API refuses others).
PARAMS = ("from", "to", "window", "kind", "task_id", "trace_id")

#: The route's OpenAPI description (api/openapi.py lists it under PATHS).
FINDING_SCHEMA = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": list(FINDING_TYPES)},
        "rule": {"type": "string"},
        "severity": {"type": "string", "enum": ["critical", "warning", "info"]},
        "hop": {"type": ["object", "null"],
                "properties": {"kind": {"type": ["string", "null"]},
                               "name": {"type": ["string", "null"]}}},
        "task_type": {"type": ["string", "null"]},
        "evidence": {"type": "object", "additionalProperties": {"type": ["number", "null"]}},
        "examples": {"type": "array", "items": {
            "type": "object", "properties": {"task_id": {"type": "string"},
                                             "span_id": {"type": "string"}}}},
        "hint": {"type": "string"},
        "first_seen": {"type": "string"}, "first_seen_ns": {"type": "integer"},
        "last_seen": {"type": "string"}, "last_seen_ns": {"type": "integer"},
    },
}
KIND_PARAM = {"name": "kind", "in": "query", "required": False,
              "description": "Only findings of this type; 400 for a type not in the list.",
              "schema": {"type": "string", "enum": list(FINDING_TYPES)}}
TASK_PARAMS = [
    {"name": "task_id", "in": "query", "required": False,
     "description": "Only what is wrong with this task: the detectors run over its spans "
                    "alone, plus the findings of a window as long as the asked one (default "
                    "1h) centred on the task that list it among their examples; 404 for an "
                    "unknown task (on ClickHouse, also one no materializer pass has judged "
                    "yet).",
     "schema": {"type": "string"}},
    {"name": "trace_id", "in": "query", "required": False,
     "description": "As task_id, for the task(s) holding this trace (32 hex digits).",
     "schema": {"type": "string"}},
]


def findings_answer(store: ReadStore, ask) -> dict:
    """Answer GET /api/v1/findings: {window, kind, task_id, trace_id, findings}."""
    kind = check_kind(ask.get("kind"))  # 400 before any query runs
    task_id, trace_id = ask.get("task_id") or None, ask.get("trace_id") or None
    window = ask.window()
    if not (task_id or trace_id):  # the window answered: whole minutes (find_findings)
        start_ns, end_ns = whole_minutes(window.start_ns, window.end_ns)
        window = replace(window, start_ns=start_ns, end_ns=end_ns)
    found = find_findings(store, window.start_ns, window.end_ns, kind, ask.config.findings,
                          task_id=task_id, trace_id=trace_id,
                          threads=ask.config.server.findings_threads)
    return {"window": window.as_json(), "kind": kind, "task_id": task_id,
            "trace_id": trace_id, "findings": found}
