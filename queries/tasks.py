"""Tasks and traces: list tasks, one task with its first failing hop and span tree, one trace.

List membership: a finished task belongs to the window holding its end, a task in progress to
the window holding its start. Span trees nest children under their parent (same trace); spans
whose parent is absent are top-level. JSON columns (attributes, resource, events, links) are
parsed.
"""

from __future__ import annotations

import json

from agentsla.collector.tasks.links import followed_span
from agentsla.collector.tasks.materialize import SPAN_SLACK_NS, span_reach
from agentsla.contract import OUTCOMES, FailingHop
from agentsla.errors import PermanentError
from agentsla.queries._sql import task_filters
from agentsla.queries.store import ReadStore
from agentsla.queries.window import rfc3339

MAX_LIMIT = 1000
#: Most spans returned with one task or trace; the rest are counted, not sent.
MAX_SPANS = 10_000
#: lo_ns and hi_ns of a bounded question that reads every span (BIGINT's range).
EVERY_START = {"lo_ns": -2**63, "hi_ns": 2**63 - 1}
_JSON_COLUMNS = ("attributes", "resource", "events", "links")

def list_tasks(store: ReadStore, start_ns: int, end_ns: int, outcome: str | None = None,
               task_type: str | None = None, tenant_id: str | None = None,
               service_name: str | None = None, ffh_kind: str | None = None,
               ffh_name: str | None = None, limit: int = 100) -> list[dict]:
    """Answer: which tasks match the filters in the window, newest first?

    Rows: every column of the `tasks` view plus `start` and `end` (RFC 3339). `outcome` may be
    any of agentsla.contract.OUTCOMES, including in_progress; `limit` is at most MAX_LIMIT.
    """
    if outcome is not None and outcome not in OUTCOMES:
        raise PermanentError(f"bad outcome {outcome!r}: expected one of {', '.join(OUTCOMES)}")
    if not 1 <= limit <= MAX_LIMIT:
        raise PermanentError(f"bad limit {limit}: expected 1 to {MAX_LIMIT}")
    rows = store.rows("list_tasks", {
        "start_ns": start_ns, "end_ns": end_ns, "outcome": outcome, "ffh_kind": ffh_kind,
        "ffh_name": ffh_name, "limit": limit, **task_filters(task_type, tenant_id, service_name)})
    return [_with_times(r) for r in rows]


def get_task(store: ReadStore, task_id: str) -> dict | None:
    """Answer: what happened in one task? None when unknown.

    Returns the task row (as in list_tasks) plus `first_failing_hop` {kind, name, reason,
    span_id, detail_span_id} (null when none), `spans` (a tree: each span's columns, `start`,
    `end`, parsed JSON columns and `children`) and `spans_truncated` (true past MAX_SPANS).
    """
    rows = store.rows("task", {"task_id": task_id})
    if not rows:
        return None
    task = _with_times(rows[0])
    spans = _task_spans(store, task)
    return {**task, "first_failing_hop": _first_failing_hop(task), **_tree(spans)}


def _task_spans(store: ReadStore, task: dict) -> list[dict]:
    """The task's spans (at most MAX_SPANS + 1), in start order, without scanning every span.

    Spans of a task start within its interval give or take clock skew between services and
    late work (a tool still running after the gateway answered), so they are first read among
    spans starting in [start - SPAN_SLACK_NS, end + SPAN_SLACK_NS] (no upper bound while the
    task runs), which DuckDB answers from a few row groups instead of the whole table. The
    writer stores `span_count` with the spans in one transaction, so finding that many spans
    (read in the same statement) proves none lies outside; otherwise (a span skewed or late
    beyond the slack, a task over MAX_SPANS) the unbounded query answers. Same rows either way.
    """
    count, start, end = task.get("span_count"), task.get("start_ns"), task.get("end_ns")
    params = {"task_id": task["task_id"], "limit": MAX_SPANS + 1}
    if count and start is not None and count <= MAX_SPANS:
        spans = store.rows("task_spans_bounded", {**params, **reach_params([start], [end])})
        if spans and all(s.pop("expected_spans") == len(spans) for s in spans):
            return spans
    return store.rows("task_spans", params)


def reach_params(starts: list[int], ends: list[int | None]) -> dict[str, int]:
    """`span_reach` of these tasks as the bounded questions' lo_ns and hi_ns (within BIGINT)."""
    lo, hi = span_reach(starts, ends)
    return {"lo_ns": max(lo, EVERY_START["lo_ns"]),
            "hi_ns": EVERY_START["hi_ns"] if hi is None else min(hi, EVERY_START["hi_ns"])}


def get_trace(store: ReadStore, trace_id: str) -> dict | None:
    """Answer: what are the spans of one trace, as a tree? None when unknown.

    Returns {trace_id, task_ids (the tasks its spans belong to), spans (tree as in get_task),
    spans_truncated}.
    """
    spans = store.rows("trace_spans", {"trace_id": trace_id, "limit": MAX_SPANS + 1})
    if not spans:
        return None
    task_ids = sorted({s["task_id"] for s in spans if s["task_id"] is not None})
    return {"trace_id": trace_id, "task_ids": task_ids, **_tree(spans)}


def task_trace_ids(store: ReadStore, task_ids: list[str]) -> dict[str, str]:
    """Answer: which trace holds each of these tasks? Maps task_id to trace_id."""
    if not task_ids:
        return {}
    return {r["task_id"]: r["trace_id"]
            for r in store.rows("task_trace_ids", {"task_ids": task_ids})}


def _with_times(row: dict) -> dict:
    return {**row, "start": rfc3339(row.get("start_ns")), "end": rfc3339(row.get("end_ns"))}


def _first_failing_hop(task: dict) -> dict | None:
    hop = FailingHop.from_row(task)  # the one shape alerts, incidents and exports carry too
    return None if hop is None else hop.to_json()


def _tree(spans: list[dict]) -> dict:
    """Nest spans under their parents (within a trace), keeping start order among siblings;
    a queue consumer's entry whose trace joined its producer's task by a link
    (collector/tasks/links.py) under the producer's span, marked `via_link`."""
    truncated = len(spans) > MAX_SPANS
    nodes = [_node(s) for s in spans[:MAX_SPANS]]
    by_id = {(n["trace_id"], n["span_id"]): n for n in nodes}
    parent_of = {key: by_id.get((n["trace_id"], n["parent_span_id"])) for key, n in by_id.items()}
    for key, node in by_id.items():
        producer = by_id.get(followed_span(node) or ())
        if parent_of[key] is None and producer is not None:
            parent_of[key] = producer
            node["via_link"] = True
    roots = []
    for node in nodes:
        parent = parent_of[(node["trace_id"], node["span_id"])]
        if parent is None or _in_cycle(node, parent_of):
            roots.append(node)
        else:
            parent["children"].append(node)
    return {"spans": roots, "spans_truncated": truncated}


def _in_cycle(node: dict, parent_of: dict) -> bool:
    # malformed parent ids can loop; such a span is shown at the top instead of nested forever
    seen, current = {id(node)}, parent_of[(node["trace_id"], node["span_id"])]
    while current is not None:
        if id(current) in seen:
            return True
        seen.add(id(current))
        current = parent_of[(current["trace_id"], current["span_id"])]
    return False


def _node(span: dict) -> dict:
    node = _with_times(span)
    for column in _JSON_COLUMNS:
        node[column] = _parse_json(node.get(column))
    node["children"] = []
    return node


def _parse_json(text):
    if text is None or not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text  # stored verbatim when it was not JSON; show it as it is
