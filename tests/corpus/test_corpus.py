"""Diagnosis on traces from real instrumentation, through a real `agentsla serve`.

tests/data/corpus/NAME.json are OTLP/JSON traces that real instrumentation packages wrote while
driving their real client libraries against local fake servers (tests/corpus/make_corpus.py;
the Node cases: tests/corpus/node_case.py, captured once; their live test needs node and
`npm ci` in tests/corpus/node). Beside each, NAME.expected.yaml
says by hand what a post-mortem would: outcome, first failing hop, retries, findings.

The replay test posts each fixture (times moved to now) to the OTLP/HTTP receiver; the live test
plays each Python case again (real instrumentation, real OTLP/HTTP exporter, real serve) so the
corpus cannot rot against the packages installed here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

import node_case
from corpus_cases import CASES
from serverproc import ServerProcess

HERE = Path(__file__).parent
CORPUS = HERE.parent / "data" / "corpus"
EXPECTED = {p.name.removesuffix(".expected.yaml"): p for p in CORPUS.glob("*.expected.yaml")}
#: How long a task may take to be listed as finished on a loaded box.
SETTLE_S = 60.0


@pytest.fixture(scope="module")
def corpus_server(tmp_path_factory: pytest.TempPathFactory):
    """One real server for the whole corpus: every case is its own trace."""
    proc = ServerProcess(tmp_path_factory.mktemp("corpus") / "data").start()
    yield proc
    if proc.proc and proc.proc.poll() is None:
        proc.stop()


def expectation(case: str) -> dict:
    """The hand-written expectation of a case, `none` read as nothing."""
    told = yaml.safe_load(EXPECTED[case].read_text())
    none = lambda value: None if value == "none" else value  # noqa: E731
    return {"outcome": told["outcome"], "first_failing_hop": none(told["first_failing_hop"]),
            "retries": told.get("retries"), "findings": sorted(none(told["findings"]) or [])}


def shifted(body: dict, end_ns: int) -> tuple[dict, str]:
    """Move every time in an OTLP/JSON body so its last span ends at end_ns; return its trace."""
    spans = [s for r in body["resourceSpans"] for sc in r["scopeSpans"] for s in sc["spans"]]
    delta = end_ns - max(int(s["endTimeUnixNano"]) for s in spans)
    for span in spans:
        for key in ("startTimeUnixNano", "endTimeUnixNano"):
            span[key] = str(int(span[key]) + delta)
        for event in span.get("events", ()):
            event["timeUnixNano"] = str(int(event["timeUnixNano"]) + delta)
    return body, spans[0]["traceId"]


def diagnosis(server: ServerProcess, trace_id: str) -> dict:
    """What the server says of the task of a trace (its task id is the trace id)."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        answer = server.api(f"/api/v1/tasks/{trace_id}")
        if answer.status_code == 200 and answer.json()["finished"]:
            break
        assert time.monotonic() < deadline, f"task {trace_id} not finished: {answer.text}"
        time.sleep(0.2)
    task = answer.json()
    findings = server.api("/api/v1/findings", trace_id=trace_id)
    assert findings.status_code == 200, findings.text
    ffh = None if task["ffh_kind"] is None else {
        "kind": task["ffh_kind"], "name": task["ffh_name"], "reason": task["ffh_reason"]}
    return {"outcome": task["outcome"], "first_failing_hop": ffh, "retries": task["retries"],
            "findings": sorted({f["type"] for f in findings.json()["findings"]})}


def assert_matches(got: dict, expected: dict) -> None:
    """Compare what the server says with what the story says (retries only where told)."""
    if expected["retries"] is None:
        got = {**got, "retries": None}
    assert got == expected


def test_every_fixture_has_its_expectation() -> None:
    fixtures = {p.stem for p in CORPUS.glob("*.json")}
    assert fixtures == set(EXPECTED)
    # a case added to the generator is committed too
    assert set(CASES) | set(node_case.CASES) <= fixtures


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_replayed_fixture_is_diagnosed_as_told(corpus_server: ServerProcess, case: str) -> None:
    body, trace_id = shifted(json.loads((CORPUS / f"{case}.json").read_text()), time.time_ns())
    sent = httpx.post(corpus_server.traces_url, json=body, timeout=30)
    assert sent.status_code == 200, sent.text
    assert_matches(diagnosis(corpus_server, trace_id), expectation(case))


@pytest.mark.parametrize("case", sorted(CASES))
def test_live_instrumentation_is_diagnosed_as_told(corpus_server: ServerProcess,
                                                   case: str) -> None:
    played = subprocess.run([sys.executable, str(HERE / "make_corpus.py"), "--case", case,
                             "--endpoint", corpus_server.otlp_url],
                            capture_output=True, text=True, timeout=300)
    assert played.returncode == 0, played.stderr
    trace_id = json.loads(played.stdout.splitlines()[-1])["trace_id"]
    assert_matches(diagnosis(corpus_server, trace_id), expectation(case))


@pytest.mark.skipif(not node_case.available(), reason="node or `npm ci` in tests/corpus/node")
@pytest.mark.parametrize("case", sorted(node_case.CASES))
def test_live_node_exporter_is_diagnosed_as_told(corpus_server: ServerProcess, case: str) -> None:
    trace_id = node_case.send(case, corpus_server.otlp_url)
    assert_matches(diagnosis(corpus_server, trace_id), expectation(case))
