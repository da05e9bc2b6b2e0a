"""Findings that name tasks: "what is wrong with this task?" by task_id or trace_id."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, set_span_in_context
from shapes import Trace, healthy_task
from spanfactory import BASE_NS

from agentsla.errors import NotFound
from agentsla.queries.findings import find_findings
from agentsla.queries.tasks import get_task

EVERYTHING = (BASE_NS - 10**12, BASE_NS + 10**15)


def ghost_task(at_ms: float) -> Trace:
    """A model call that ran 20 s past the end of its task's root."""
    t = Trace(at_ms=at_ms, root_end_ms=1_000)
    t.child(t.root, "model", "gpt-4o", 10, 21_000, hop_timeout_ms=30_000)
    return t


def masked_429(at_ms: float) -> Trace:
    """One call that absorbed a 429 with a retry: one such task alone is below the threshold."""
    t = Trace(at_ms=at_ms, root_end_ms=1_900)
    for attempt, error in enumerate(("rate_limited", None)):
        t.child(t.root, "model", "claude", 10 + attempt * 110, 110 + attempt * 110,
                hop_timeout_ms=5_000, retry_max=3, retry_attempt=attempt, error_type=error,
                status_code="error" if error else "unset")
    return t


@pytest.fixture(scope="module")
def world(load_module):
    ghost = ghost_task(0)
    maskers = [masked_429(100_000 + i * 2_000) for i in range(5)]
    healthy = [r for i in range(3) for r in healthy_task(200_000 + i * 5_000, i)]
    rows = ghost.rows + [r for t in maskers for r in t.rows] + healthy
    return load_module(rows), ghost, maskers, healthy


def kinds(found: list[dict]) -> set[tuple[str, str]]:
    return {(f["type"], f["rule"]) for f in found}


def test_every_finding_lists_example_tasks(world) -> None:
    store, *_ = world
    found = find_findings(store, *EVERYTHING, None, {})
    assert found and all(f["examples"] and all(e["task_id"] for e in f["examples"])
                         for f in found)


def test_a_tasks_own_findings(world) -> None:
    store, ghost, *_ = world
    found = find_findings(store, *EVERYTHING, None, {}, task_id=ghost.task_id)
    assert kinds(found) == {("ghost_work", "work_after_cutoff")}
    assert {e["task_id"] for f in found for e in f["examples"]} == {ghost.task_id}


def test_trace_id_asks_about_the_task_holding_it(world) -> None:
    store, ghost, *_ = world
    by_trace = find_findings(store, *EVERYTHING, None, {}, trace_id=ghost.trace_id)
    assert kinds(by_trace) == {("ghost_work", "work_after_cutoff")}


def test_task_id_and_trace_id_together_ask_about_both(world) -> None:
    store, ghost, maskers, _ = world
    both = find_findings(store, *EVERYTHING, None, {}, task_id=ghost.task_id,
                         trace_id=maskers[2].trace_id)
    assert kinds(both) == {("ghost_work", "work_after_cutoff"),
                           ("rate_limit_masking", "absorbed_429s")}


def test_population_findings_that_name_the_task_are_included(world) -> None:
    # Five tasks absorbed one 429 each: only together do they reach rate_limit_min_absorbed.
    store, _, maskers, _ = world
    found = find_findings(store, *EVERYTHING, None, {}, task_id=maskers[2].task_id)
    assert kinds(found) == {("rate_limit_masking", "absorbed_429s")}


def test_a_span_beyond_the_slack_is_still_read(load) -> None:
    # Work that started an hour after its root ended lies outside the task's reach
    # (SPAN_SLACK_NS): the scope reads where spans can start, misses it by the task's
    # span_count and reads every span instead. The task lookup does the same.
    late = Trace(at_ms=0, root_end_ms=1_000)
    late.child(late.root, "tool", "report", 3_600_000, 3_610_000, hop_timeout_ms=30_000)
    store = load(late.rows)
    # a one-minute window: the findings of the time around the task cannot name it instead
    found = find_findings(store, BASE_NS, BASE_NS + 60 * 10**9, None, {}, task_id=late.task_id)
    assert kinds(found) == {("ghost_work", "work_after_cutoff")}
    assert len(get_task(store, late.task_id)["spans"][0]["children"]) == 1


def test_a_healthy_task_has_no_findings(world) -> None:
    store, *_, healthy = world
    task_id = healthy[0]["trace_id"]
    assert find_findings(store, *EVERYTHING, None, {}, task_id=task_id) == []


def test_kind_still_filters(world) -> None:
    store, ghost, *_ = world
    assert find_findings(store, *EVERYTHING, "context_growth", {}, task_id=ghost.task_id) == []


def test_unknown_task_is_not_found(world) -> None:
    store, ghost, *_ = world
    with pytest.raises(NotFound, match="unknown task 'nope'"):
        find_findings(store, *EVERYTHING, None, {}, task_id="nope")
    # the scope ended: the store answers about every task again
    assert kinds(find_findings(store, *EVERYTHING, None, {})) >= {
        ("ghost_work", "work_after_cutoff"), ("rate_limit_masking", "absorbed_429s")}


def emit_ghost_task(server) -> str:
    """Export, with the real SDK, a task whose model call ran 20 s past the root's end."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=server.traces_url)))
    tracer = provider.get_tracer("agentsla-tests")
    t0 = time.time_ns() - 60 * 10**9
    root = tracer.start_span("POST /chat", kind=SpanKind.SERVER, start_time=t0,
                             attributes={"hop.timeout_ms": 60_000})
    call = tracer.start_span("chat gpt-4o", context=set_span_in_context(root),
                             start_time=t0 + 10**7, kind=SpanKind.CLIENT, attributes={
                                 "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                                 "hop.timeout_ms": 30_000})
    call.end(end_time=t0 + 21 * 10**9)
    root.end(end_time=t0 + 10**9)
    provider.shutdown()
    return format(root.get_span_context().trace_id, "032x")


def test_api_and_cli_answer_what_is_wrong_with_a_task(server) -> None:
    task_id = emit_ghost_task(server)
    answer = server.api("/api/v1/findings", task_id=task_id)
    assert answer.status_code == 200, answer.text
    assert kinds(answer.json()["findings"]) == {("ghost_work", "work_after_cutoff")}
    assert answer.json()["task_id"] == task_id
    missing = server.api("/api/v1/findings", task_id="nope")
    assert missing.status_code == 404 and "unknown task 'nope'" in missing.json()["error"]
    cli = subprocess.run([sys.executable, "-m", "agentsla", "findings", "--task", task_id,
                          "--api", server.api_url, "--json"], capture_output=True, text=True,
                         timeout=60)
    assert cli.returncode == 0, cli.stderr
    assert kinds(json.loads(cli.stdout)["findings"]) == {("ghost_work", "work_after_cutoff")}
