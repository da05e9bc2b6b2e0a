"""Findings of one task: run the detectors over only that task's spans ("what is wrong with it?").

`task_scope(store, task_id, trace_id)` yields the scope and the store to ask its questions of,
which see only the asked task (or the tasks holding the trace) in `spans` and `tasks`, so every
detector's question runs unchanged; the scope ends when the block does.

On DuckDB temporary tables shadow the views on the store's own cursor. A ClickHouse store's
runner is shared by every thread of the process (one chdb session, one HTTP client), where a
temporary table would shadow the views for every request: there the findings' SQL reads
`{{finding_spans}}` and `{{finding_tasks}}`, and the scoped store fills them with the snippets
`scoped_spans` and `scoped_tasks`, bound to the scope's task and trace ids and span times.
There the findings read the spans a materializer pass has judged: a task no pass has judged
yet is not found, and the error says so (NOT_JUDGED_YET).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

import pyarrow as pa

from agentsla.errors import NotFound
from agentsla.queries.store import ReadStore
from agentsla.queries.tasks import EVERY_START, reach_params

#: Dialects whose findings take the scope as snippets (their store is shared by threads).
BY_SNIPPET = frozenset({"clickhouse"})

#: The snippets a scoped store fills the findings' placeholders with.
SCOPED_SNIPPETS = {"finding_spans": "scoped_spans", "finding_span_rows": "scoped_spans",
                   "finding_tasks": "scoped_tasks"}

#: Why a task may be unknown to a BY_SNIPPET store although its spans arrived: its findings
#: read the materializer's judged spans (docs/scale-out.md, The findings' spans).
NOT_JUDGED_YET = ("; a ClickHouse store knows a task once a materializer pass has judged its "
                  "spans, up to one materialize_interval after they arrive")


@dataclass(frozen=True)
class Scope:
    """The scoped tasks, and their window: from the first span's start to just after the last
    end; `store` answers the questions over those tasks only."""

    task_ids: frozenset[str]
    start_ns: int
    end_ns: int
    store: ReadStore


class ScopedStore:
    """A store whose finding questions read the scoped tasks' rows only (BY_SNIPPET)."""

    def __init__(self, store: ReadStore, bounds: Mapping[str, Any]) -> None:
        self._store = store
        self._params = {"scope_task_ids": bounds["task_ids"],
                        "scope_trace_ids": bounds["trace_ids"],
                        "scope_start_ns": bounds["start_ns"], "scope_end_ns": bounds["end_ns"]}
        self.dialect = store.dialect

    def rows(self, question: str, params: Mapping[str, Any] | None = None,
             **fragments: str) -> list[dict]:
        """Ask the question of the scoped rows."""
        return self._store.rows(question, {**(params or {}), **self._params},
                                **SCOPED_SNIPPETS, **fragments)

    def arrow(self, question: str, params: Mapping[str, Any] | None = None,
              **fragments: str) -> pa.Table:
        """Ask the question of the scoped rows, as Arrow."""
        return self._store.arrow(question, {**(params or {}), **self._params},
                                 **SCOPED_SNIPPETS, **fragments)

    def interrupt(self) -> None:
        """Interrupt the underlying store's question."""
        self._store.interrupt()

    def sibling(self) -> None:
        """None: the scope's parameters are this store's (its questions run on one thread)."""

    def close(self) -> None:
        """Leave the underlying store open: the scope borrows it."""


@contextmanager
def task_scope(store: ReadStore, task_id: str | None, trace_id: str | None) -> Iterator[Scope]:
    """Limit the store's questions to one task or trace's tasks; NotFound if there are none."""
    params = {"task_id": task_id, "trace_id": trace_id}
    if store.dialect in BY_SNIPPET:
        (bounds,) = store.rows("findings/scope_bounds", params)
        _check(bounds, task_id, trace_id, NOT_JUDGED_YET)
        yield _scope(bounds, ScopedStore(store, bounds))
        return
    try:
        store.rows("findings/scope_trace_tasks" if trace_id else "findings/scope_task", params)
        (bounds,) = _read_spans(store)
        _check(bounds, task_id, trace_id)
        yield _scope(bounds, store)
    finally:
        store.rows("findings/scope_drop_spans")
        store.rows("findings/scope_drop_tasks")


def _read_spans(store: ReadStore) -> list[dict]:
    """Fill the scope's spans (DuckDB) and return its bounds: first where the tasks' spans can
    start (`span_reach`), then, if fewer than the tasks' span_count were found there (a span
    skewed or late beyond the slack), from every span, as the task lookup does."""
    tasks = store.rows("findings/scope_reach")
    if not tasks:  # an unknown task: no span to read (an empty range), a 404 to answer
        store.rows("findings/scope_spans", {"lo_ns": 0, "hi_ns": -1})
        return store.rows("findings/scope_bounds")
    expected = [t["span_count"] for t in tasks]
    if None not in expected and all(t["start_ns"] is not None for t in tasks):
        store.rows("findings/scope_spans", reach_params([t["start_ns"] for t in tasks],
                                                        [t["end_ns"] for t in tasks]))
        bounds = store.rows("findings/scope_bounds")
        if bounds[0]["spans"] == sum(expected):
            return bounds
    store.rows("findings/scope_drop_spans")  # else `main.spans` would name the temporary table
    store.rows("findings/scope_spans", EVERY_START)
    return store.rows("findings/scope_bounds")


def _check(bounds: Mapping[str, Any], task_id: str | None, trace_id: str | None,
           why: str = "") -> None:
    if not bounds["task_ids"] or bounds["start_ns"] is None:
        asked = f"task {task_id!r}" if task_id else f"trace {trace_id!r}"
        raise NotFound(f"unknown {asked}{why}")


def _scope(bounds: Mapping[str, Any], store: ReadStore) -> Scope:
    return Scope(frozenset(bounds["task_ids"]), bounds["start_ns"], bounds["end_ns"] + 1, store)
