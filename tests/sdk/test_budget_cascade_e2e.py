"""The post-mortem's cascade through a real chain of processes and a real `agentsla serve`.

Gateway (3 s budget, uvicorn) → queue → worker (2 s read timeout × 3 attempts) → a model with
an 8 s tail. Two requests arrive while the worker is down; then fast, flaky and tail requests.
Without agentsla-budget agentsla must see the cascade; with it, the same load must be
budget-correct: fitting timeouts, no retry that cannot fit, expired messages dropped, and the
gateway answering in time.
"""

from __future__ import annotations

import pytest
from serverproc import ServerProcess

import chain

CASCADE = {"budget_inversion", "retry_amplification", "ghost_work"}


def _spans(server: ServerProcess, task_id: str) -> list[dict]:
    def walk(span: dict):
        yield span
        for child in span["children"]:
            yield from walk(child)
    return [s for top in server.api(f"/api/v1/tasks/{task_id}").json()["spans"] for s in walk(top)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory):
    """Both runs, each into its own fresh `agentsla serve`: {mode: (server, run)}."""
    servers, played = [], {}
    try:
        for mode in ("before", "after"):
            root = tmp_path_factory.mktemp(mode)
            servers.append(ServerProcess(root / "data").start())
            played[mode] = (servers[-1], chain.play(mode, servers[-1].otlp_url, root / "chain"))
        yield played
    finally:
        for server in servers:
            server.stop()


def _findings(server: ServerProcess) -> list[dict]:
    response = server.api("/api/v1/findings", window="1h")
    assert response.status_code == 200, response.text
    return response.json()["findings"]


def _calls(run: chain.Run, kind: str) -> list[chain.Call]:
    return [call for call in run.calls if call.kind == kind]


def _model_spans(server: ServerProcess, call: chain.Call) -> list[dict]:
    return [s for s in _spans(server, call.task_id) if s["hop_kind"] == "model"]


def test_without_the_library_agentsla_reports_the_cascade(runs) -> None:
    server, run = runs["before"]
    found = {(f["type"], f["hop"].get("kind"), f["hop"].get("name")) for f in _findings(server)}
    assert ("budget_inversion", "model", "tail-model") in found
    assert ("retry_amplification", "model", "tail-model") in found
    assert {kind for kind, *_ in found} >= {"ghost_work"}
    # 2 s read timeout x 3 attempts under a 3 s gateway, and the attempts all happened.
    tail = _model_spans(server, _calls(run, "tail")[0])
    assert len(tail) == 3 and all(s["error_type"] == "timeout" for s in tail)
    assert tail[0]["hop_timeout_ms"] * (tail[0]["retry_max"] + 1) == 6000
    # Work after the 504: the messages that waited out their caller were still worked on.
    assert all(call.status == 504 for call in _calls(run, "backlog") + _calls(run, "tail"))
    assert run.dropped() == 0 and len(run.worker_log) == len(run.calls)
    backlog = _calls(run, "backlog")[0]
    worker = [s for s in _spans(server, backlog.task_id) if s["hop_kind"] == "agent"]
    root_end = min(_spans(server, backlog.task_id), key=lambda s: s["start_ns"])["end_ns"]
    assert worker and worker[0]["start_ns"] > root_end


def test_with_the_library_agentsla_reports_no_cascade(runs) -> None:
    server, _ = runs["after"]
    assert not {f["type"] for f in _findings(server)} & CASCADE


def test_with_the_library_every_timeout_fits_what_was_left(runs) -> None:
    server, run = runs["after"]
    models = [s for call in run.calls for s in _model_spans(server, call)]
    assert len(models) >= 7
    for span in models:
        attempts_left = span["retry_max"] + 1 - span["retry_attempt"]
        assert span["hop_timeout_ms"] * attempts_left <= span["budget_remaining_ms"], span


def test_with_the_library_a_tail_call_stops_when_no_retry_fits(runs) -> None:
    server, run = runs["after"]
    for call in _calls(run, "tail"):
        assert call.status == 504 and call.body["error"] == "budget_exhausted"
        task = server.api(f"/api/v1/tasks/{call.task_id}").json()
        assert task["outcome"] == "budget_exhausted"
        ffh = task["first_failing_hop"]
        assert (ffh["kind"], ffh["name"], ffh["reason"]) == ("model", "tail-model", "timeout")
        (attempt,) = _model_spans(server, call)  # one attempt: a retry could not fit
        assert attempt["retry_max"] == 0


def test_with_the_library_expired_messages_are_dropped(runs) -> None:
    server, run = runs["after"]
    assert run.dropped() == len(chain.BACKLOG)
    for call in _calls(run, "backlog"):
        task = server.api(f"/api/v1/tasks/{call.task_id}").json()
        assert task["outcome"] == "budget_exhausted"
        assert task["first_failing_hop"]["kind"] == "queue"
        assert {s["hop_kind"] for s in _spans(server, call.task_id)} == {"gateway", "queue"}


def test_with_the_library_the_gateway_answers_within_its_budget(runs) -> None:
    server, run = runs["after"]
    for call in run.calls:
        task = server.api(f"/api/v1/tasks/{call.task_id}").json()
        assert task["budget_total_ms"] == 3000
        assert task["duration_ms"] <= 3000 + 250, (call.kind, task["duration_ms"])
        assert call.latency_s < 3 + 1.5


@pytest.mark.parametrize("mode", ["before", "after"])
def test_fast_and_flaky_requests_succeed_either_way(runs, mode: str) -> None:
    server, run = runs[mode]
    for call in _calls(run, "fast") + _calls(run, "flaky"):
        assert call.status == 200 and call.body["answer"].startswith("answer to:")
        assert server.api(f"/api/v1/tasks/{call.task_id}").json()["outcome"] == "success"
    flaky = _model_spans(server, _calls(run, "flaky")[0])
    assert sorted(s["retry_attempt"] for s in flaky) == [0, 1]  # the 503 was retried


def test_the_span_contract_is_stamped_by_the_library(runs) -> None:
    server, run = runs["after"]
    spans = _spans(server, _calls(run, "fast")[0].task_id)
    root = min(spans, key=lambda s: s["start_ns"])
    assert (root["hop_kind"], root["task_type"]) == ("gateway", "answer")
    assert root["budget_total_ms"] == 3000
    assert all(s["budget_remaining_ms"] is not None for s in spans)
    assert {s["hop_kind"] for s in spans} == {"gateway", "queue", "agent", "model"}
    assert len(server.api("/api/v1/tasks", window="1h").json()["tasks"]) == len(run.calls)
