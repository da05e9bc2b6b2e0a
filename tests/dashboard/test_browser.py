"""The dashboard in a real browser: `agentsla dashboard` as a subprocess against a real server,
every page opened in headless Chromium (Playwright, Debian's /usr/bin/chromium), the key number
compared with the API's, and a screenshot of each page saved under test-artifacts/dashboard/."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from agentsla.dashboard import fmt
from serverproc import free_port

CHROMIUM = os.environ.get("AGENTSLA_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).parents[2] / "test-artifacts" / "dashboard"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
WAIT_MS = 60_000


def _require_browser():
    """Return playwright's sync API, failing (never skipping) with how to install what is missing."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's chromium with "
                    "`apt-get update && apt-get install -y --no-install-recommends chromium` "
                    "(scripts/test does this) or set AGENTSLA_CHROMIUM to a Chromium binary.")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the playwright package is missing: `.venv/bin/pip install -e '.[test]'` "
                    "(do not run `playwright install`; the tests use Debian's chromium)")
    return sync_playwright


@pytest.fixture(scope="module")
def dashboard(seeded):
    """`agentsla dashboard` on a free port against the seeded server; yields its base URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentsla", "dashboard", "--port", str(port), "--api",
         seeded.api_url], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"agentsla dashboard exited: {proc.stdout.read()}"
            try:
                if httpx.get(f"{url}/_stcore/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        else:
            pytest.fail("agentsla dashboard did not answer /_stcore/health within 60 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        proc.stdout.close()


@pytest.fixture(scope="module")
def browser(dashboard):
    """One headless Chromium for the module."""
    sync_playwright = _require_browser()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # one context per colour scheme: pages share the HTTP cache of Streamlit's scripts
        contexts = {scheme: chromium.new_context(viewport={"width": 1400, "height": 1600},
                                                 color_scheme=scheme)
                    for scheme in ("light", "dark")}
        yield contexts
        chromium.close()


#: What a drawn chart holds: Plotly's SVG with one element per trace of the figure.
_TRACES = {"scatter": ".scatterlayer .trace", "bar": ".barlayer .trace",
           "heatmap": ".heatmaplayer .hm"}


def _drawn_charts(page) -> dict[str, dict[str, int]]:
    """Every chart plotly.js drew in the page (dashboard/render.py chart): its title -> number
    of drawn traces of each trace type it has."""
    drawn = {}
    for chart in page.locator(".js-plotly-plot").all():
        # plotly.js draws every trace of a figure in one pass: once one shows, all do
        chart.locator(", ".join(_TRACES.values())).first.wait_for(state="attached",
                                                                   timeout=WAIT_MS)
        title = chart.locator(".gtitle").first.text_content(timeout=WAIT_MS)
        counts = {kind: chart.locator(css).count() for kind, css in _TRACES.items()}
        drawn[title] = {kind: n for kind, n in counts.items() if n}
    return drawn


def _visit(browser, url: str, label: str, expected: str, shot: str,
           charts: dict[str, dict[str, int]] | None = None, scheme: str = "light") -> None:
    """Open `url`, wait for the metric `label` to show `expected`, check that the `charts`
    (title -> traces drawn per type) are drawn by plotly.js, then shoot."""
    page = browser[scheme].new_page()
    try:
        page.goto(url)
        metric = page.get_by_test_id("stMetric").filter(has_text=label).first
        metric.wait_for(timeout=WAIT_MS)
        value = metric.get_by_test_id("stMetricValue")
        assert value.inner_text(timeout=WAIT_MS).strip() == expected
        page.get_by_test_id("stStatusWidget").wait_for(state="hidden", timeout=WAIT_MS)
        if charts:
            page.locator(".js-plotly-plot").nth(len(charts) - 1).wait_for(timeout=WAIT_MS)
            assert _drawn_charts(page) == charts
        assert page.get_by_test_id("stException").count() == 0
        assert "Traceback" not in page.inner_text("body")
        page.screenshot(path=str(ARTIFACTS / f"{shot}.png"), full_page=True)
    finally:
        page.close()


def test_overview(browser, dashboard, seeded) -> None:
    totals = seeded.api("/api/v1/sla", window="1h").json()["totals"]
    _visit(browser, f"{dashboard}/", "Task success", fmt.pct(totals["success_rate"]),
           "overview", charts={
               # four lines; one bar per outcome of the seed (success, degraded, failed,
               # budget exhausted); one bar group per task type (chat, research)
               "Task success vs gateway success": {"scatter": 4},
               "Finished tasks by outcome": {"bar": 4},
               "Error-budget burn rate by window": {"bar": 2}})


def test_root_causes(browser, dashboard, seeded) -> None:
    answer = seeded.api("/api/v1/root-causes", window="1h").json()
    _visit(browser, f"{dashboard}/root-causes", "Blamed tasks",
           fmt.count(answer["blamed_tasks"]), "root-causes", charts={
               # bars and the cumulative line; one bar per cause: the degraded tasks' 429s, the
               # tool timeout, the slow model of the budget-exhausted task
               "First failing hop (Pareto)": {"bar": 1, "scatter": 1},
               "First failing hops over time": {"bar": 3}})


def test_hops(browser, dashboard, seeded) -> None:
    hops = seeded.api("/api/v1/hops", window="1h").json()["hops"]
    _visit(browser, f"{dashboard}/hops", "Calls (spans)",
           fmt.count(sum(h["calls"] for h in hops)), "hops", charts={
               "Latency percentiles per hop": {"bar": 3},  # p50, p95, p99
               "Timeout, 429 and circuit-open rates per call": {"bar": 3},
               "Error rate per hop over time": {"heatmap": 1}})


def test_budgets_and_findings(browser, dashboard, seeded) -> None:
    budget = seeded.api("/api/v1/budget", window="1h").json()
    _visit(browser, f"{dashboard}/budgets", "Average duration",
           fmt.duration(budget["avg_duration_ms"]), "budgets",
           charts={"Where the time of an average task went (self time by hop kind)": {"bar": 1}})


def test_task_explorer(browser, dashboard, seeded) -> None:
    tasks = seeded.api("/api/v1/tasks", window="1h", outcome="failed").json()["tasks"]
    # dark theme: the waterfall's colours and labels must stay legible
    _visit(browser, f"{dashboard}/tasks?task={tasks[0]['task_id']}", "Outcome", "failed",
           "task-explorer-dark",
           charts={"Trace waterfall": {"bar": 1, "scatter": 1}},  # spans, their deadlines
           scheme="dark")


def test_alerts(browser, dashboard, seeded) -> None:
    page = browser["light"].new_page()
    try:
        page.goto(f"{dashboard}/alerts")
        if seeded.api("/api/v1/alerts").status_code == 404:
            page.get_by_text("Alerts are not configured").wait_for(timeout=WAIT_MS)
        else:
            page.get_by_test_id("stTable").or_(page.get_by_text("No alerts")).first.wait_for(
                timeout=WAIT_MS)
        assert page.get_by_test_id("stException").count() == 0
        page.screenshot(path=str(ARTIFACTS / "alerts.png"), full_page=True)
    finally:
        page.close()


def test_a_chart_says_so_when_plotly_js_does_not_load(browser, dashboard, seeded) -> None:
    page = browser["light"].new_page()
    # the browser cannot fetch the bundle (a proxy, an ad blocker, a broken install)
    page.route("**/plotly-cartesian.min.js", lambda route: route.abort())
    try:
        page.goto(f"{dashboard}/root-causes")
        errors = page.locator("[data-chart-error]")
        errors.nth(1).wait_for(timeout=WAIT_MS)  # the Pareto and the causes over time
        page.get_by_test_id("stStatusWidget").wait_for(state="hidden", timeout=WAIT_MS)
        assert errors.count() == 2 and page.locator(".js-plotly-plot").count() == 0
        for text in errors.all_inner_texts():
            assert text.startswith("This chart cannot be drawn: plotly.js (")
            assert "plotly-cartesian.min.js) did not load: the browser could not load it" in text
        # the rest of the page is drawn
        metric = page.get_by_test_id("stMetric").filter(has_text="Blamed tasks").first
        answer = seeded.api("/api/v1/root-causes", window="1h").json()
        assert metric.get_by_test_id("stMetricValue").inner_text() == fmt.count(
            answer["blamed_tasks"])
        assert page.get_by_test_id("stException").count() == 0
        page.screenshot(path=str(ARTIFACTS / "chart-bundle-missing.png"), full_page=True)
    finally:
        page.close()
