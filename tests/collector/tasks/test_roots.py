"""Roots and task boundaries: remote parents, the root grace, the lost deadline (docs/tasks.md)."""

from __future__ import annotations

from dataclasses import replace
import pytest

from agentsla.collector.store.writer import TaskWriter
from agentsla.collector.tasks.materialize import lost_deadline_ns, materialize_task
from agentsla.config import load_config
from spanfactory import make_trace, ms

CONFIG = replace(load_config().tasks, default_budget=300.0, lost_grace=60.0, root_grace=30.0)
UPSTREAM = "00f067aa0ba902b7"  # the load balancer's span: exported elsewhere, never arrives


def platform(root_remote: bool | None, **root: object) -> list[dict]:
    """An API behind an instrumented load balancer: its SERVER span, an agent, a failing model."""
    return make_trace(
        {"span_id": "api", "parent_span_id": UPSTREAM, "parent_remote": root_remote,
         "span_kind": "server", "name": "POST /chat", "start_ms": 0, "end_ms": 2000,
         "http_status": 500, "status_code": "error", "error_type": "server_error", **root},
        {"span_id": "ag", "parent": "api", "hop_kind": "agent", "agent": "planner",
         "start_ms": 5, "end_ms": 1990, "parent_remote": False},
        {"span_id": "m1", "parent": "ag", "hop_kind": "model", "model": "gpt-4o",
         "span_kind": "client", "start_ms": 10, "end_ms": 1500, "status_code": "error",
         "error_type": "rate_limited", "parent_remote": False})


def at(spans: list[dict], now_ns: int, first_seen_ns: int = ms(2000)) -> dict:
    return materialize_task("t", spans, CONFIG, now_ns, first_seen_ns)


def test_span_with_remote_parent_is_the_root_at_once() -> None:
    task = at(platform(root_remote=True), now_ns=ms(2001))
    assert task["root_span_id"] == "api" and task["finished"]
    assert task["outcome"] == "failed"
    assert (task["ffh_kind"], task["ffh_name"], task["ffh_reason"]) == ("model", "gpt-4o",
                                                                       "rate_limited")


@pytest.mark.parametrize(("seconds_after_arrival", "outcome"), [
    (29.9, "in_progress"),  # still waiting: the parent may be in the next export batch
    (30.0, "failed"),       # grace passed: the SERVER span is the entry point
])
def test_server_span_without_flags_becomes_root_after_the_grace(seconds_after_arrival: float,
                                                                outcome: str) -> None:
    spans = platform(root_remote=None)  # an SDK that predates the is_remote flags
    task = at(spans, now_ns=ms(2000 + seconds_after_arrival * 1000))
    assert task["outcome"] == outcome


def test_local_parent_is_waited_for_until_lost() -> None:
    # The SDK said the parent is in-process (flags 0x100 only): it will come, or the task is lost.
    spans = platform(root_remote=False)
    assert at(spans, now_ns=ms(2000 + 31_000))["outcome"] == "in_progress"
    assert at(spans, now_ns=ms(2000 + 360_000))["outcome"] == "lost"


def test_remote_parent_that_arrives_later_hands_over_the_root() -> None:
    # Both services export to agentsla: the gateway's spans come after the API's root.
    spans = platform(root_remote=True, http_status=200, status_code="unset", error_type=None)
    gateway = make_trace(
        {"span_id": "gw", "span_kind": "server", "name": "gateway", "start_ms": -10,
         "end_ms": 2100, "http_status": 502, "status_code": "error", "parent_remote": False},
        {"span_id": UPSTREAM, "parent": "gw", "span_kind": "client", "start_ms": -5,
         "end_ms": 2050, "parent_remote": False})
    task = at(spans + gateway, now_ns=ms(2200))
    assert task["root_span_id"] == "gw" and task["outcome"] == "failed"


def test_lost_deadline_uses_a_childs_remaining_budget_plus_its_offset() -> None:
    # The agent started 400 ms into the task with 2 s left: the task had 2.4 s.
    spans = make_trace({"span_id": "ag", "parent_span_id": UPSTREAM, "parent_remote": False,
                        "start_ms": 0, "end_ms": 900},
                       {"span_id": "m1", "parent": "ag", "start_ms": 400, "end_ms": 800,
                        "budget_remaining_ms": 2000.0, "parent_remote": False})
    deadline = ms(1000) + 2_400_000_000 + 60 * 10**9
    assert lost_deadline_ns(spans, CONFIG, first_seen_ns=ms(1000)) == deadline
    assert at(spans, now_ns=deadline - 1, first_seen_ns=ms(1000))["outcome"] == "in_progress"
    lost = at(spans, now_ns=deadline, first_seen_ns=ms(1000))
    assert lost["outcome"] == "lost" and lost["end_ns"] == deadline


def test_lost_deadline_prefers_a_total_budget_on_any_span() -> None:
    spans = make_trace({"span_id": "ag", "parent_span_id": UPSTREAM, "parent_remote": False,
                        "start_ms": 0, "end_ms": 900, "budget_total_ms": 5000.0},
                       {"span_id": "m1", "parent": "ag", "start_ms": 400, "end_ms": 800,
                        "budget_remaining_ms": 2000.0, "parent_remote": False})
    assert lost_deadline_ns(spans, CONFIG, ms(1000)) == ms(1000) + 5 * 10**9 + 60 * 10**9


def test_writer_sweep_roots_a_task_when_the_grace_passes(con) -> None:
    writer = TaskWriter(con, CONFIG)
    spans = platform(root_remote=None)
    for span in spans:
        span["received_ns"] = ms(2000)
    writer.write(spans, now_ns=ms(2000))
    state = "select outcome, ffh_name from tasks"
    assert con.execute(state).fetchall() == [("in_progress", None)]
    assert writer.sweep_lost(now_ns=ms(2000 + 29_000)) == 0
    assert con.execute(state).fetchall() == [("in_progress", None)]
    assert writer.sweep_lost(now_ns=ms(2000 + 30_000)) == 0  # rooted, not lost
    assert con.execute(state).fetchall() == [("failed", "gpt-4o")]
