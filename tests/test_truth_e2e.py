"""The product's diagnosis agrees with the simulator's ground truth, through a real server.

Each scenario is played by the simulator (real OpenTelemetry SDK, real OTLP/HTTP exporter) into
a fresh `agentsla serve`; every task's outcome and first failing hop must equal what the
simulator knows it did, and the findings a scenario plants must be reported. In the standard
vocabularies (`genai`, `openinference`: no agentsla attributes) the truth is what those still
tell (docs/simulator.md, "Vocabularies"), for several seeds; findings on clean traffic: none.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from agentsla.simulator import SCENARIOS, run
from serverproc import ServerProcess

TASKS = 120
SEED = 20261129
#: The standard vocabularies (no agentsla attributes) play other seeds: every vocabulary a
#: seed of its own, so three seeds per scenario in all; `-m soak` adds two more each.
STANDARD_TASKS = 60
RUNS = [("agentsla", SEED, TASKS, ()), ("genai", 20261201, STANDARD_TASKS, ()),
        ("openinference", 7, STANDARD_TASKS, ()),
        *((vocabulary, seed, TASKS, (pytest.mark.soak,))
          for vocabulary in ("genai", "openinference") for seed in (11, 20270101))]
PLAYS = [pytest.param(scenario, vocabulary, seed, tasks,
                      id=f"{scenario}-{vocabulary}" + (f"-{seed}" if marks else ""),
                      marks=marks)
         for scenario in sorted(SCENARIOS) for vocabulary, seed, tasks, marks in RUNS]
#: How long to wait for the server to list every task it acknowledged (a loaded box is slow).
SETTLE_S = 60.0


def read_truth(path: Path) -> tuple[dict, list[dict]]:
    """Header and task lines of a ground-truth file."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return lines[0], [line for line in lines if line["type"] == "task"]


def ffh_of(task: dict) -> dict | None:
    """The first failing hop of a task row of /api/v1/tasks, as the truth file writes it."""
    if task["ffh_kind"] is None:
        return None
    return {"kind": task["ffh_kind"], "name": task["ffh_name"], "reason": task["ffh_reason"]}


def listed_tasks(server: ServerProcess, window: dict, expected: set[str]) -> dict[str, dict]:
    """The server's finished tasks by id, once all expected ones are listed (bounded wait)."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        listed = server.api("/api/v1/tasks", limit=1000, **window).json()["tasks"]
        got = {t["task_id"]: t for t in listed if t["finished"]}
        if expected <= got.keys() or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


@pytest.mark.parametrize("scenario, vocabulary, seed, tasks", PLAYS)
def test_classification_matches_ground_truth(server: ServerProcess, tmp_path: Path,
                                             scenario: str, vocabulary: str, seed: int,
                                             tasks: int) -> None:
    truth_path = tmp_path / "truth.jsonl"
    summary = run(scenario, seed=seed, tasks=tasks, endpoint=server.otlp_url, speed=0,
                  truth_path=truth_path, vocabulary=vocabulary)
    header, truth = read_truth(truth_path)
    assert len(truth) == summary.tasks == tasks
    assert header["vocabulary"] == vocabulary
    start = header["anchor_unix_nano"] // 10**9 - 60
    window = {"from": start, "to": start + 6 * 3600}
    listed = listed_tasks(server, window, {t["task_id"] for t in truth})
    got = {task_id: (task["outcome"], ffh_of(task)) for task_id, task in listed.items()}
    mismatches = [(t["task_id"], (t["outcome"], t["first_failing_hop"]), got.get(t["task_id"]))
                  for t in truth if got.get(t["task_id"]) != (t["outcome"], t["first_failing_hop"])]
    assert mismatches == [], f"{len(mismatches)} of {tasks} tasks disagree: {mismatches[:5]}"

    findings = server.api("/api/v1/findings", **window)
    assert findings.status_code == 200, findings.text
    reported = {f["type"] for f in findings.json()["findings"]}
    segment = header["segments"][0]
    assert set(segment["planted"]) <= reported, f"missing {set(segment['planted']) - reported}"
    assert reported <= set(segment["planted"]) | set(segment["incidental"]), \
        f"unexpected findings {reported - set(segment['planted']) - set(segment['incidental'])}"
