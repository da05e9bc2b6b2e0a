"""The task page shows what is wrong with the task: its findings, as the API answers them."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from agentsla.dashboard import fmt, render
from seed import APP
from slowapi import answer, settle

TIMEOUT = 60


def _task_page(monkeypatch, api_url: str, task_id: str) -> AppTest:
    monkeypatch.setenv("AGENTSLA_API", api_url)
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params.update(task=task_id)
    at.run()
    settle(at.switch_page("views/tasks.py").run())
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_task_page_lists_the_tasks_findings(seeded, monkeypatch) -> None:
    listed = seeded.api("/api/v1/tasks", window="1h", limit=200).json()["tasks"]
    task = next(t for t in listed if t["outcome"] == "budget_exhausted")
    found = answer(seeded, "/api/v1/findings", task_id=task["task_id"])["findings"]
    assert found  # the seed's exhausted task: its model timeout exceeds the budget left
    at = _task_page(monkeypatch, seeded.api_url, task["task_id"])
    table = at.table[-1].value
    assert table["finding"].tolist() == [render.literal(f"{fmt.label(f['type'])} ({f['rule']})")
                                       for f in found]
    assert table["fix"].tolist() == [render.literal(f["hint"]) for f in found]


def test_task_page_says_when_a_task_has_no_findings(seeded, monkeypatch) -> None:
    listed = seeded.api("/api/v1/tasks", window="1h", limit=200).json()["tasks"]
    task = next(t for t in listed if t["outcome"] == "success"
                and not answer(seeded, "/api/v1/findings", task_id=t["task_id"])["findings"])
    at = _task_page(monkeypatch, seeded.api_url, task["task_id"])
    assert "No findings for this task." in [c.value for c in at.caption]
