"""Findings of one task: run the detectors over only that task's spans ("what is wrong with it?").

`task_scope(store, task_id, trace_id)` shadows the views `spans` and `tasks` with temporary
tables holding just the asked task (or the tasks holding the trace), on the store's own cursor,
so every detector's question runs unchanged; the scope ends when the block does.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from agentsla.errors import NotFound
from agentsla.queries.store import ReadStore


@dataclass(frozen=True)
class Scope:
    """The scoped tasks, and their window: from the first span's start to just after the last end."""

    task_ids: frozenset[str]
    start_ns: int
    end_ns: int


@contextmanager
def task_scope(store: ReadStore, task_id: str | None, trace_id: str | None) -> Iterator[Scope]:
    """Limit the store's questions to one task or trace's tasks; NotFound if there are none."""
    params = {"task_id": task_id, "trace_id": trace_id}
    try:
        store.rows("findings/scope_tasks", params)
        store.rows("findings/scope_spans", params)
        (bounds,) = store.rows("findings/scope_bounds")
        if not bounds["task_ids"] or bounds["start_ns"] is None:
            asked = f"task {task_id!r}" if task_id else f"trace {trace_id!r}"
            raise NotFound(f"unknown {asked}")
        yield Scope(frozenset(bounds["task_ids"]), bounds["start_ns"], bounds["end_ns"] + 1)
    finally:
        store.rows("findings/scope_drop_spans")
        store.rows("findings/scope_drop_tasks")
