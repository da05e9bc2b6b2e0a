"""Scenarios through the SDK's in-memory exporter: determinism, contract, truth, shapes."""

from __future__ import annotations

import json
from collections import defaultdict
from functools import lru_cache

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from simref import classify

from agentsla.contract import ERROR_TYPES, FINDING_TYPES, HOP_KINDS
from agentsla.simulator import SCENARIOS, run

DURATION = 120.0  # virtual seconds per scenario: a few hundred tasks, well under a second each


@lru_cache(maxsize=None)
def play(scenario: str, seed: int = 7, duration: float = DURATION):
    """Run a scenario once per (scenario, seed); return the summary and spans by trace id."""
    exporter = InMemorySpanExporter()
    summary = run(scenario, seed=seed, duration=duration, exporter=exporter)
    traces = defaultdict(list)
    for span in exporter.get_finished_spans():
        traces[f"{span.context.trace_id:032x}"].append(span)
    return summary, dict(traces)


def _ids(scenario: str, seed: int):
    summary, traces = play(scenario, seed)
    return [(r["task_id"], r["trace_id"], r["outcome"], r["first_failing_hop"])
            for r in summary.truth], sorted(
        (s.context.span_id, s.start_time - summary.anchor_unix_nano, s.end_time - s.start_time)
        for spans in traces.values() for s in spans)


def test_same_seed_same_ids_outcomes_and_durations() -> None:
    exporter = InMemorySpanExporter()
    again = run("rate_limit_storm", seed=7, duration=DURATION, exporter=exporter)
    first, _ = play("rate_limit_storm")
    assert [r["task_id"] for r in again.truth] == [r["task_id"] for r in first.truth]
    assert [r["trace_id"] for r in again.truth] == [r["trace_id"] for r in first.truth]
    assert [r["outcome"] for r in again.truth] == [r["outcome"] for r in first.truth]
    assert _ids("rate_limit_storm", 7)[1] == sorted(
        (s.context.span_id, s.start_time - again.anchor_unix_nano, s.end_time - s.start_time)
        for s in exporter.get_finished_spans())


def test_another_seed_other_ids() -> None:
    assert _ids("baseline", 7)[0][0][0] != _ids("baseline", 8)[0][0][0]


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_spans_carry_the_contract(scenario: str) -> None:
    summary, traces = play(scenario)
    assert summary.tasks > 20
    for spans in traces.values():
        roots = [s for s in spans if s.parent is None]
        assert len(roots) == 1
        root = roots[0].attributes
        for key in ("task.id", "task.type", "tenant.id", "budget.total_ms", "hop.timeout_ms",
                    "http.response.status_code"):
            assert key in root, key
        for span in spans:
            a = span.attributes
            assert a["hop.kind"] in HOP_KINDS and "budget.remaining_ms" in a
            if "error.type" in a:
                assert span.status.status_code.name == "ERROR"
                assert a["error.type"] in ERROR_TYPES
            op = a.get("gen_ai.operation.name")
            if op == "chat":
                for key in ("gen_ai.request.model", "gen_ai.provider.name", "hop.timeout_ms",
                            "gen_ai.usage.input_tokens", "retry.attempt", "retry.max"):
                    assert key in a, key
                if "error.type" not in a:
                    assert a["gen_ai.response.time_to_first_chunk"] > 0
            elif op == "execute_tool":
                assert "gen_ai.tool.name" in a and "hop.timeout_ms" in a
            elif op == "invoke_agent":
                assert "gen_ai.agent.name" in a and "agent.loop.limit" in a


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_truth_matches_the_emitted_tasks(scenario: str) -> None:
    summary, traces = play(scenario)
    assert sorted(r["trace_id"] for r in summary.truth) == sorted(traces)
    for record in summary.truth:
        spans = traces[record["trace_id"]]
        root = next(s for s in spans if s.parent is None)
        assert root.attributes["task.id"] == record["task_id"]
        assert record["spans"] == len(spans)
        assert set(record["findings"]) <= set(FINDING_TYPES)
        # Read the spans with the brief's definitions: the truth must say the same.
        assert classify(spans) == (record["outcome"], record["first_failing_hop"]), record


def test_truth_file_has_header_tasks_and_footer(tmp_path) -> None:
    path = tmp_path / "truth.jsonl"
    summary = run("baseline:20,model_long_tail:20", seed=3, exporter=InMemorySpanExporter(),
                  truth_path=path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["type"] == "header" and len(lines[0]["segments"]) == 2
    assert lines[0]["segments"][1]["planted"] == list(SCENARIOS["model_long_tail"].planted)
    assert [r["type"] for r in lines[1:-1]] == ["task"] * summary.tasks
    assert lines[-1]["type"] == "summary" and lines[-1]["tasks"] == summary.tasks
    assert {r["scenario"] for r in lines[1:-1]} == {"baseline", "model_long_tail"}


def test_baseline_plants_nothing_and_succeeds() -> None:
    summary, traces = play("baseline")
    assert SCENARIOS["baseline"].planted == ()
    assert set(summary.outcomes) == {"success"}
    assert not any(r["findings"] for r in summary.truth)
    retried = [s for spans in traces.values() for s in spans
               if s.attributes.get("retry.attempt", 0) > 0]
    assert retried, "some connection errors are recovered by one retry"


def _all(scenario: str):
    return [s for spans in play(scenario)[1].values() for s in spans]


def test_model_long_tail_has_ghost_work_and_inverted_budgets() -> None:
    summary, traces = play("model_long_tail", seed=2, duration=240.0)
    ghosts = 0
    for spans in traces.values():
        root = next(s for s in spans if s.parent is None)
        ghosts += any(s.end_time > root.end_time for s in spans)
    assert ghosts >= 5
    assert summary.outcomes.get("rejected", 0) > 0  # the queue filled up
    model = [s for spans in traces.values() for s in spans
             if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert all(s.attributes["hop.timeout_ms"] == 45000 and s.attributes["retry.max"] == 2
               for s in model)
    assert any(r["first_failing_hop"] == {"kind": "model", "name": "gpt-4o", "reason": "timeout"}
               for r in summary.truth)


def test_rate_limit_storm_masks_429s_and_duplicates_a_side_effect() -> None:
    spans = _all("rate_limit_storm")
    assert any(s.attributes.get("http.response.status_code") == 429 for s in spans)
    keys = defaultdict(int)
    for s in spans:
        if "idempotency.key" in s.attributes and "error.type" not in s.attributes:
            keys[s.attributes["idempotency.key"]] += 1
    assert max(keys.values()) >= 2
    backup_failed = [s for s in spans if s.attributes.get("fallback.kind") == "backup_model"
                     and s.attributes.get("error.type") == "rate_limited"]
    assert backup_failed, "false failover: the backup hits its own quota"


def test_polling_gaps_are_about_two_seconds() -> None:
    polls = defaultdict(list)
    for s in _all("polling_wait"):
        if s.attributes.get("gen_ai.tool.name") == "get_job_status":
            polls[s.parent.span_id].append(s)
    gaps = [(b.start_time - a.end_time) / 1e9 for ps in polls.values()
            for a, b in zip(sorted(ps, key=lambda s: s.start_time),
                            sorted(ps, key=lambda s: s.start_time)[1:])]
    assert gaps and all(1.9 < g < 2.1 for g in gaps)
    assert not any(s.attributes.get("gen_ai.tool.name") == "get_job_status"
                   for s in _all("polling_wait_fixed"))


def test_long_prompt_grows_context_and_the_gateway_gives_up() -> None:
    summary, _ = play("long_prompt")
    spans = _all("long_prompt")
    assert max(s.attributes.get("gen_ai.usage.input_tokens", 0) for s in spans) > 8000
    assert summary.outcomes.get("budget_exhausted", 0) > 0
    assert any(s.attributes.get("http.response.status_code") == 504 for s in spans)


def test_tool_without_timeout_hangs_then_the_breaker_opens() -> None:
    spans = _all("tool_no_timeout")
    db = [s for s in spans if s.attributes.get("gen_ai.tool.name") == "query_orders_db"]
    assert all(s.attributes["hop.timeout_ms"] == 0 for s in db)
    assert max(s.end_time - s.start_time for s in db) > 60e9
    assert any(s.attributes.get("error.type") == "circuit_open"
               and s.attributes.get("circuit.state") == "open" for s in db)
    assert play("tool_no_timeout")[0].outcomes.get("degraded", 0) > 0


def test_runaway_loop_runs_past_the_limit() -> None:
    summary, traces = play("runaway_loop")
    assert summary.outcomes.get("failed", 0) > 0
    for record in summary.truth:
        if record["outcome"] == "failed":
            assert record["first_failing_hop"]["reason"] == "loop_limit"
            agent = next(s for s in traces[record["trace_id"]]
                         if s.attributes["hop.kind"] == "agent")
            assert agent.attributes["agent.loop.steps"] > agent.attributes["agent.loop.limit"]


@pytest.mark.parametrize("scenario", [n for n in SCENARIOS if n.endswith("_fixed")])
def test_fixed_variants_plant_nothing(scenario: str) -> None:
    assert SCENARIOS[scenario].planted == ()
    assert SCENARIOS[scenario.removesuffix("_fixed")].planted
