"""Which task a trace belongs to (collector/tasks/links.py, `resolve_task`): the one rule the
DuckDB writer (per batch) and the ClickHouse materializer (per pass) both apply. Each case is a
story from docs/tasks.md, Traces of a task; the writers' own tests hold them end to end."""

from __future__ import annotations

import pytest

from agentsla.collector.tasks.links import resolve_task

GATEWAY, WORKER, RETRY = "a" * 32, "b" * 32, "c" * 32


@pytest.mark.parametrize("story,trace,stored,declared,linked,expected", [
    ("a new trace that claims nothing is keyed by its id",
     GATEWAY, {}, {}, {}, GATEWAY),
    ("a trace declaring task.id joins that task",
     GATEWAY, {}, {GATEWAY: "req-1"}, {}, "req-1"),
    ("a trace keyed by its id until its root brought task.id moves, once",
     GATEWAY, {GATEWAY: GATEWAY}, {GATEWAY: "req-1"}, {}, "req-1"),
    ("the first task a trace was stored under wins over a later task.id",
     GATEWAY, {GATEWAY: "req-1"}, {GATEWAY: "req-2"}, {}, "req-1"),
    ("a consumer's trace joins the stored task of the trace it links to",
     WORKER, {GATEWAY: "req-1"}, {}, {WORKER: GATEWAY}, "req-1"),
    ("a consumer joins the trace it links to, keyed by that trace's id while it claims none",
     WORKER, {}, {}, {WORKER: GATEWAY}, GATEWAY),
    ("a consumer arriving with its producer joins the task the producer declares",
     WORKER, {}, {GATEWAY: "req-1"}, {WORKER: GATEWAY}, "req-1"),
    ("a chain of consumers resolves through to the first trace's task",
     RETRY, {}, {GATEWAY: "req-1"}, {RETRY: WORKER, WORKER: GATEWAY}, "req-1"),
    ("a trace stored under a provisional task goes where that task's trace goes",
     WORKER, {WORKER: GATEWAY}, {GATEWAY: "req-1"}, {}, "req-1"),
    ("a cycle of links claims nothing: each trace keeps its own id",
     WORKER, {}, {}, {GATEWAY: WORKER, WORKER: GATEWAY}, WORKER),
])
def test_a_trace_of_the_batch_resolves_to_its_task(story, trace, stored, declared, linked,
                                                    expected):
    present = {GATEWAY, WORKER, RETRY}
    assert resolve_task(trace, stored, declared, linked, present) == expected, story


def test_a_trace_stored_under_a_provisional_task_whose_trace_is_absent_stays_there():
    assert resolve_task(WORKER, {WORKER: GATEWAY}, {}, {}, {WORKER}) == GATEWAY


def test_a_linked_trace_absent_and_stored_under_a_task_gives_that_task():
    assert resolve_task(WORKER, {GATEWAY: "req-1"}, {}, {WORKER: GATEWAY}, {WORKER}) == "req-1"


def test_a_consumer_linking_to_a_trace_not_seen_yet_joins_a_task_keyed_by_that_trace():
    assert resolve_task(WORKER, {}, {}, {WORKER: GATEWAY}, {WORKER}) == GATEWAY
