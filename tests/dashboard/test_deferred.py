"""A slow /findings does not hold its page back: the rest is drawn, the findings section says it
is still computing, and fills in when the answer arrives (or shows the dashboard's timeout)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest

from agentsla.dashboard import data, fmt, render
from seed import APP
from serverproc import serving
from slowapi import answer, pending_infos, settle, slow_route

TIMEOUT = 60
#: Seconds the proxy holds /api/v1/findings back: longer than a page run of the seeded data.
DELAY_S = 4.0


@pytest.fixture
def slow_findings(seeded):
    """The seeded server behind a proxy that answers /api/v1/findings DELAY_S late."""
    with serving(slow_route(seeded.api_url, "/api/v1/findings", DELAY_S)) as url:
        yield url


def _page(monkeypatch, api_url: str, page: str, **query) -> AppTest:
    monkeypatch.setenv("AGENTSLA_API", api_url)
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params.update(query)
    at.run()
    return at.switch_page(f"views/{page}.py").run()


def test_budgets_page_draws_first_and_fills_findings_in(seeded, slow_findings, monkeypatch):
    budget = answer(seeded, "/api/v1/budget", window="1h")
    found = answer(seeded, "/api/v1/findings", window="1h")["findings"]
    at = _page(monkeypatch, slow_findings, "budgets")
    assert found  # the seed has findings, so filling them in shows
    # drawn before the findings came: the budget numbers, a placeholder, no error, no findings
    assert next(m.value for m in at.metric if m.label == "Average duration") == fmt.duration(
        budget["avg_duration_ms"])
    assert len(pending_infos(at)) == 1 and pending_infos(at)[0].startswith("Findings are")
    assert not at.error and not at.exception and len(at.expander) == 0
    settle(at)
    assert not at.error and not at.exception
    assert len(at.expander) == len(found)


def test_task_page_asks_its_findings_before_it_waits_for_the_task(seeded, monkeypatch):
    # The findings are the page's slowest answer: asked first, the API computes them while the
    # task is fetched and drawn. Held back here, the task's answer comes DELAY_S late; the
    # findings must have been asked meanwhile, not after it.
    listed = answer(seeded, "/api/v1/tasks", window="1h", limit=200)["tasks"]
    task_path = f"/api/v1/tasks/{listed[0]['task_id']}"
    arrivals: list = []
    with serving(slow_route(seeded.api_url, task_path, DELAY_S, arrivals)) as url:
        _page(monkeypatch, url, "tasks", task=listed[0]["task_id"])
    asked = {path: at for path, at in reversed(arrivals)}  # each path's first arrival
    assert asked["/api/v1/findings"] < asked[task_path] + DELAY_S / 2


def test_task_page_draws_the_task_before_its_findings(seeded, slow_findings, monkeypatch):
    listed = answer(seeded, "/api/v1/tasks", window="1h", limit=200)["tasks"]
    task = next(t for t in listed if t["outcome"] == "budget_exhausted")
    found = answer(seeded, "/api/v1/findings", task_id=task["task_id"])["findings"]
    at = _page(monkeypatch, slow_findings, "tasks", task=task["task_id"])
    assert next(m.value for m in at.metric if m.label == "Outcome") == "budget exhausted"
    assert pending_infos(at) and pending_infos(at)[0].startswith("This task's findings are")
    settle(at)
    assert not at.error and not at.exception
    assert at.table[-1].value["fix"].tolist() == [render.literal(f["hint"]) for f in found]


def test_findings_past_the_deferred_timeout_show_the_timeout(seeded, slow_findings,
                                                             monkeypatch):
    monkeypatch.setattr(data, "DEFERRED_TIMEOUT_S", DELAY_S / 4)
    at = _page(monkeypatch, slow_findings, "budgets")
    assert pending_infos(at) and not at.error
    settle(at)
    assert len(at.error) == 1
    assert at.error[0].value.startswith(f"cannot reach the agentsla API at {slow_findings}")
    assert "timed out" in at.error[0].value
    assert any(m.label == "Average duration" for m in at.metric)  # the rest stays drawn


def test_a_call_in_flight_does_not_hold_the_dashboard_at_exit(tmp_path):
    # SIGTERM stops Streamlit, whose interpreter then exits: a deferred /findings still running
    # must not keep it alive (a ThreadPoolExecutor's threads are joined at exit)
    script = tmp_path / "exits.py"
    script.write_text(
        "import time\n"
        "from agentsla.dashboard.data import _Background\n"
        "class Slow:\n"
        "    def findings(self):\n"
        "        time.sleep(600)\n"
        "future, _ = _Background().get(('api', 'findings', (), ()), Slow())\n"
        "time.sleep(0.5)\n"
        "assert future.running()\n")
    proc = subprocess.run([sys.executable, str(script)], timeout=60, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
