"""The product's diagnosis agrees with the simulator's ground truth, through a real server.

Each scenario is played by the simulator (real OpenTelemetry SDK, real OTLP/HTTP exporter) into
a fresh `agentsla serve`; every task's outcome and first failing hop must equal what the
simulator knows it did, and the findings a scenario plants must be reported.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentsla.simulator import SCENARIOS, run
from serverproc import ServerProcess

TASKS = 120
SEED = 20261129


def read_truth(path: Path) -> tuple[dict, list[dict]]:
    """Header and task lines of a ground-truth file."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return lines[0], [line for line in lines if line["type"] == "task"]


def ffh_of(task: dict) -> dict | None:
    """The first failing hop of a task row of /api/v1/tasks, as the truth file writes it."""
    if task["ffh_kind"] is None:
        return None
    return {"kind": task["ffh_kind"], "name": task["ffh_name"], "reason": task["ffh_reason"]}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_classification_matches_ground_truth(server: ServerProcess, tmp_path: Path,
                                             scenario: str) -> None:
    truth_path = tmp_path / "truth.jsonl"
    summary = run(scenario, seed=SEED, tasks=TASKS, endpoint=server.otlp_url, speed=0,
                  truth_path=truth_path)
    header, truth = read_truth(truth_path)
    assert len(truth) == summary.tasks == TASKS
    start = header["anchor_unix_nano"] // 10**9 - 60
    window = {"from": start, "to": start + 6 * 3600}
    listed = server.api("/api/v1/tasks", limit=1000, **window).json()["tasks"]
    got = {task["task_id"]: (task["outcome"], ffh_of(task)) for task in listed}
    mismatches = [(t["task_id"], (t["outcome"], t["first_failing_hop"]), got.get(t["task_id"]))
                  for t in truth if got.get(t["task_id"]) != (t["outcome"], t["first_failing_hop"])]
    assert mismatches == [], f"{len(mismatches)} of {TASKS} tasks disagree: {mismatches[:5]}"

    findings = server.api("/api/v1/findings", **window)
    assert findings.status_code == 200, findings.text
    reported = {f["type"] for f in findings.json()["findings"]}
    segment = header["segments"][0]
    assert set(segment["planted"]) <= reported, f"missing {set(segment['planted']) - reported}"
    assert reported <= set(segment["planted"]) | set(segment["incidental"]), \
        f"unexpected findings {reported - set(segment['planted']) - set(segment['incidental'])}"
