"""The simulator's standard vocabularies carry no agentsla attribute (simulator/vocabulary.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentsla.errors import AgentslaError
from agentsla.simulator import run

#: Namespaces of agentsla's own span contract.
AGENTSLA = ("hop.", "task.", "tenant.", "budget.", "retry.", "fallback.", "circuit.",
            "idempotency.", "agent.loop.")


def played(vocabulary: str, tmp_path: Path, scenario: str = "rate_limit_storm"):
    memory = InMemorySpanExporter()
    run(scenario, seed=3, tasks=30, exporter=memory, truth_path=tmp_path / "t.jsonl",
        vocabulary=vocabulary)
    lines = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    return memory.get_finished_spans(), lines


@pytest.mark.parametrize("vocabulary", ["genai", "openinference"])
def test_standard_vocabularies_carry_no_agentsla_attribute(tmp_path: Path,
                                                            vocabulary: str) -> None:
    spans, lines = played(vocabulary, tmp_path)
    keys = {key for span in spans for key in span.attributes}
    assert not {k for k in keys if k.startswith(AGENTSLA)}
    assert "gen_ai.response.time_to_first_chunk" not in keys
    assert lines[0]["vocabulary"] == vocabulary
    # without task.id a task is known by its trace
    assert all(t["task_id"] == t["trace_id"] for t in lines if t["type"] == "task")


def test_genai_writes_exception_classes_as_error_type(tmp_path: Path) -> None:
    spans, _ = played("genai", tmp_path)
    raised = [(s.attributes["error.type"], e.attributes["exception.type"])
              for s in spans for e in s.events if e.name == "exception"]
    assert ("openai.RateLimitError", "openai.RateLimitError") in raised
    assert all(error_type == exception for error_type, exception in raised)
    types = {s.attributes.get("error.type") for s in spans}
    assert "budget_exhausted" not in types


def test_openinference_model_spans(tmp_path: Path) -> None:
    spans, _ = played("openinference", tmp_path)
    llm = [s for s in spans if s.attributes.get("openinference.span.kind") == "LLM"]
    assert llm and all(s.attributes["llm.model_name"] in ("gpt-4o", "claude-3-5-sonnet")
                       for s in llm)
    assert not any("error.type" in s.attributes for s in llm)  # status and events say it
    assert any(e.name == "exception" for s in llm for e in s.events)


def test_unknown_vocabulary_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AgentslaError, match="unknown vocabulary 'otel'"):
        played("otel", tmp_path)
