"""Dashboard benchmark: time every page of `agentsla dashboard` in headless Chromium over ~1M tasks.

    python bench/dashboard.py --data-dir /tmp/q10m --reuse           # a file from bench/queries.py
    python bench/dashboard.py --spans 1000000                        # generate ~100k tasks first
    python bench/dashboard.py --data-dir /tmp/q10m --reuse --windows 24h --repeat 5

Data. `--reuse` serves an existing `agentsla.duckdb` (build one with
`python bench/queries.py --spans 10000000 --data-dir DIR --keep`: ~10 spans per task, so 10M
spans = ~1M tasks over 24 h). The file is never touched: it is copied to a temp dir (the server
opens its file read-write), and the copy's timestamps are shifted so the newest span was received
"now" (the generator spreads tasks over the 24 h before it ran; an hour-old file would leave the
1h window nearly empty). `--in-place` serves the dir itself (no copy, no shift). Without
`--reuse`, `--spans` spans are generated into a temp dir with bench/queries.py's generator.

Setup. A real `agentsla serve --data-dir` (AGENTSLA_LOST_GRACE=7d, as bench/queries.py) and a real
`agentsla dashboard --api ...` on free loopback ports. Between the two sits a small logging proxy
in this process (loopback, keep-alive; `--no-proxy` drops it) that records every API call the
dashboard makes, so each page visit can be broken down into its API calls. Headless Debian
Chromium (/usr/bin/chromium) is driven by Playwright with the flags of
tests/dashboard/test_browser.py, one browser context (its HTTP cache keeps Streamlit's scripts).

Timing. A visit opens a new tab (a new Streamlit session) and measures wall time from
`page.goto` to the page being drawn: its key element (the metric or text the browser tests wait
for), all its Plotly charts drawn, the "Data from ... updated" caption that the page guard
writes after the page body, and Streamlit's running indicator gone, each checked in the page on
every animation frame. "cold": the dashboard's answer cache (st.cache_data, TTL 10 s) has
expired, so the visit calls the API (the sidebar's three filter lists plus the page's own
calls); the bench waits TTL + 1 s after the last API call before each cold visit. "warm": the
same URL opened again right after, within the TTL: no API call, only Streamlit and the browser.
Before the timed visits the server's findings evidence worker is let catch up (the copy's
findings hour tier is built again from its shifted minutes; `findings evidence current after`
says how long), as on a server that kept up with its traffic, and one untimed page load warms
Streamlit (the first script run imports Plotly and pandas) and the browser cache. Each (window,
page) is visited cold then warm `--repeat` times; the table shows medians (and max), the JSON
line every figure, the API calls of the slowest cold visit and the load average. Each visit
is also split by Streamlit's websocket frames (tab load until the rerun request; "script":
until the last message, API calls included; "draw": browser work after it), and the CPU
seconds of the dashboard, Chromium and server process trees are read from /proc: on a shared
machine CPU time is disturbed less than wall time. Pages: overview, root causes, hops, budgets
& findings, task explorer (list, and one failed task with its waterfall: a different task on
every repetition), alerts, incidents.

Baseline. Every repetition also visits, the same way and in the same browser, an empty
Streamlit page (a bare `streamlit run` of a script drawing one metric and the caption the visit
waits for). The goal (issue #15) is relative: every page within 1.5x of that empty page
(`÷empty`), a ratio that holds across machines where seconds do not.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import duckdb
import httpx

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent / "tests"))
from serverproc import ServerProcess, free_port  # noqa: E402


def _bench_queries():
    """bench/queries.py (its generator and machine line), loaded by path: `queries` is taken."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_queries", BENCH / "queries.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

CHROMIUM = os.environ.get("AGENTSLA_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
CACHE_TTL_S = 10  # dashboard/data.py CACHE_TTL_S
#: A drawn chart (dashboard/render.py chart): its traces (scatter, bar, heatmap) or,
#: for a figure without data, its message (figures._empty's annotation).
CHART_DRAWN = ".scatterlayer .trace, .barlayer .trace, .heatmaplayer .hm, .annotation"
#: Issue #15's goal: every page within this factor of an empty Streamlit page, timed the same way
#: in the same browser run (the ratio holds across machines; seconds do not).
GOAL_RATIO = 1.5
WINDOWS = ("1h", "24h")


# --- pages ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PageSpec:
    """A page: its URL path, what shows it is drawn, and how many Plotly charts it has."""

    name: str
    path: str
    metric: str | None = None  # label of an st.metric the browser test waits for
    texts: tuple[str, ...] = ()  # or any of these texts / test ids ("testid:...")
    charts: int = 0


PAGES = (
    PageSpec("overview", "/", metric="Task success", charts=3),
    PageSpec("root_causes", "/root-causes", metric="Blamed tasks", charts=2),
    PageSpec("hops", "/hops", metric="Calls (spans)", charts=3),
    PageSpec("budgets", "/budgets", metric="Average duration", charts=1),
    PageSpec("tasks_list", "/tasks", texts=("testid:stDataFrame", "No tasks match")),
    PageSpec("task", "/tasks?task={task}", metric="Outcome", charts=1),
    PageSpec("alerts", "/alerts", texts=("Alerts are not configured", "testid:stTable",
                                         "testid:stDataFrame", "No alerts")),
    PageSpec("incidents", "/incidents", texts=("No incidents", "testid:stTable",
                                               "testid:stDataFrame",
                                               "Incidents are not available")),
)
#: The baseline: a Streamlit page that draws one metric and the caption the visit waits for.
EMPTY = PageSpec("empty", "/", metric="Empty page")
EMPTY_SCRIPT = """import streamlit as st
st.metric("Empty page", 0)
st.caption("Data from nowhere")
"""


def _url(base: str, spec: PageSpec, window: str, task_id: str | None) -> str:
    path = spec.path.replace("{task}", task_id or "")
    sep = "&" if "?" in path else "?"
    return f"{base}{path}{sep}window={window}" if window != "1h" else f"{base}{path}"


# --- the logging proxy ---------------------------------------------------------------------------

class ApiProxy:
    """Forward the dashboard's API calls to the server on loopback and record each one."""

    def __init__(self, upstream: str):
        self.upstream = upstream
        self.port = free_port()
        self.calls: list[dict] = []
        self.lock = threading.Lock()
        client = httpx.Client(base_url=upstream, timeout=600)
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                started = time.perf_counter()
                record = {"start": started, "end": None, "method": self.command,
                          "path": self.path, "status": None, "bytes": 0}
                with proxy.lock:
                    proxy.calls.append(record)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() in ("authorization", "accept", "content-type")}
                try:
                    answer = client.request(self.command, self.path, content=body,
                                            headers=headers)
                    status, content = answer.status_code, answer.content
                    ctype = answer.headers.get("content-type", "application/octet-stream")
                except httpx.HTTPError as exc:
                    status, content, ctype = 502, str(exc).encode(), "text/plain"
                ended = time.perf_counter()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(content)))
                    self.end_headers()
                    self.wfile.write(content)
                except OSError:  # the dashboard gave up (its 15 s timeout) and hung up
                    status = f"{status}, client gone"
                    self.close_connection = True
                with proxy.lock:
                    record.update(end=ended, status=status, bytes=len(content))

            do_GET = do_POST = do_PUT = do_DELETE = _forward

            def log_message(self, *args) -> None:  # quiet
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self._client = client

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def between(self, t0: float, t1: float) -> list[dict]:
        """The calls that started between t0 and t1, in order; a call still running at t1 (the
        dashboard gave up on it) counts until t1 with status "running"."""
        with self.lock:
            return [c if c["end"] is not None and c["end"] <= t1 else
                    {**c, "end": t1, "status": "running"}
                    for c in self.calls if t0 <= c["start"] <= t1]

    def last_end(self) -> float:
        """When the last call ended (now while one is still running)."""
        with self.lock:
            if any(c["end"] is None for c in self.calls):
                return time.perf_counter()
            return max((c["end"] for c in self.calls), default=0.0)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._client.close()


def _call_name(path: str) -> str:
    """`/api/v1/sla?window=24h&group_by=tenant_id` -> `sla group_by=tenant_id`."""
    parts = urlsplit(path)
    route = parts.path.removeprefix("/api/v1/")
    params = dict(parse_qsl(parts.query))
    shown = {k: v for k, v in params.items() if k in ("group_by", "format", "outcome")}
    if route.startswith("tasks/") or route.startswith("traces/"):
        route = route.split("/")[0] + "/{id}"
    return " ".join([route, *(f"{k}={v}" for k, v in shown.items())])


# --- processes -----------------------------------------------------------------------------------

def _drain(stream, keep: list[str]) -> None:
    for line in stream:
        keep.append(line)
        del keep[:-200]


class StreamlitApp:
    """A Streamlit process on a free loopback port: `agentsla dashboard` against an API, or
    (`script`) a bare Streamlit script, the baseline."""

    def __init__(self, api: str | None = None, script: Path | None = None):
        self.port = free_port()
        self.log: list[str] = []
        if script is not None:
            command = ["streamlit", "run", str(script), "--server.port", str(self.port),
                       "--server.address", "127.0.0.1", "--server.headless", "true",
                       "--browser.gatherUsageStats", "false"]
        else:
            command = ["agentsla", "dashboard", "--port", str(self.port), "--host",
                       "127.0.0.1", "--api", api]
        self.proc = subprocess.Popen([sys.executable, "-m", *command],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=_drain, args=(self.proc.stdout, self.log), daemon=True).start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{command[0]} exited: " + "".join(self.log[-20:]))
            try:
                if httpx.get(f"{self.url}/_stcore/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise TimeoutError(f"{command[0]} did not answer /_stcore/health within 120 s")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


# --- data ----------------------------------------------------------------------------------------

def _counts(db_path: Path) -> dict:
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        spans, tasks = con.execute("select (select count(*) from span_store), "
                                   "(select count(*) from task_store)").fetchone()
    finally:
        con.close()
    return {"spans": spans, "tasks": tasks, "db_mib": round(db_path.stat().st_size / 2**20)}


def _shift_statements(con, shift_ns: int) -> list[str]:
    """The updates that move every stored time by shift_ns (a whole number of minutes): each
    `*_ns` BIGINT column of every table (tasks, spans, the per-minute rollups, the findings
    evidence and its dirty ranges), then each rollup's hour tier refilled from its shifted
    minutes (an hour row moved by a part of an hour would straddle two hours), and the findings
    evidence's hour tier left for the worker to build again from the shifted minutes."""
    from agentsla.collector.store import evidence, rollups

    # each hour tier's stored rows (schema 7: `<tier>_stored` tables under the readers' views)
    rollup_hours = {r.table + rollups.HOURLY + rollups.STORED for r in rollups.ROLLUPS}
    evidence_hours = [*evidence.evidence_tables(con, evidence.HOUR_TABLES), "evidence_hours_stale"]
    hourly = rollup_hours | set(evidence_hours)
    columns: dict[str, list[str]] = {}
    for table, column in con.execute(
            "select c.table_name, c.column_name from information_schema.columns c "
            "join information_schema.tables t using (table_schema, table_name) "
            "where t.table_type = 'BASE TABLE' and c.data_type = 'BIGINT' "
            "and ends_with(c.column_name, '_ns') "
            "order by c.table_name, c.ordinal_position").fetchall():
        if table not in hourly:
            columns.setdefault(table, []).append(column)
    statements = [f"update {table} set " + ", ".join(f"{c} = {c} + {shift_ns}" for c in cols)
                  for table, cols in columns.items()]
    for rollup in rollups.ROLLUPS:
        statements += [f"delete from {rollup.table}{rollups.HOURLY}{rollups.STORED}",
                       rollup.hourly_backfill(rollups.STORED)]
    return (statements + [f"delete from {table}" for table in evidence_hours]
            + evidence.stored_hours_marks(con))


def copy_and_shift(src: Path, dst_dir: Path, log) -> dict:
    """Copy src's agentsla.duckdb into dst_dir and move its stored times so the newest span was
    received in the last minute. Returns the shift in seconds."""
    db = src / "agentsla.duckdb"
    if (src / "agentsla.duckdb.wal").exists():
        raise SystemExit(f"{db}.wal exists: the file is open or was not closed cleanly; "
                         "stop its server first")
    need = db.stat().st_size * 1.3
    free = shutil.disk_usage(dst_dir).free
    if free < need:
        raise SystemExit(f"not enough disk in {dst_dir} for a copy of {db} "
                         f"({need / 2**30:.1f} GiB needed, {free / 2**30:.1f} GiB free); "
                         "pass --in-place to serve the dir itself")
    started = time.perf_counter()
    shutil.copyfile(db, dst_dir / "agentsla.duckdb")
    copied = time.perf_counter() - started
    con = duckdb.connect(str(dst_dir / "agentsla.duckdb"))
    try:
        con.execute("set enable_progress_bar = false")
        # the shift is written for this code's tables: bring an older file's schema to it first
        from agentsla.collector.store import schema

        was = schema.migrate(con)
        if was != schema.SCHEMA_VERSION:
            log(f"migrated the copy from schema {was} to {schema.SCHEMA_VERSION} in "
                f"{time.perf_counter() - started - copied:.1f} s")
        newest = con.execute("select max(received_ns) from span_store").fetchone()[0] or 0
        minute_ns = 60 * 10**9  # whole minutes: every rollup row stays on its minute
        shift = max(0, time.time_ns() - newest) // minute_ns * minute_ns
        con.execute("begin transaction")
        for statement in _shift_statements(con, shift):
            con.execute(statement)
        con.execute("commit")
        con.execute("checkpoint")
    finally:
        con.close()
    log(f"copied {db} in {copied:.1f} s; timestamps moved {shift / 1e9:,.0f} s forward "
        f"({time.perf_counter() - started:.1f} s in all)")
    return {"copied_from": str(src), "shift_s": round(shift / 1e9)}


# --- CPU time per process tree (less disturbed by other jobs than wall time) ---------------------

_TICK = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            out += [int(c) for c in (task / "children").read_text().split()]
    except OSError:
        pass
    return out


def _tree_cpu(pid: int) -> float:
    """CPU seconds of pid and its live descendants, plus their reaped children."""
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15]) / _TICK  # utime stime cutime cstime
        todo += _children(current)
    return total


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def browser_root() -> int | None:
    """The Chromium browser process Playwright started (below this process)."""
    todo = _children(os.getpid())
    while todo:
        pid = todo.pop(0)
        if _comm(pid).startswith("chrom"):
            return pid
        todo += _children(pid)
    return None


class CpuMeter:
    """CPU seconds used by the dashboard, the browser and the API server between two marks."""

    def __init__(self, roots: dict[str, int | None]):
        self.roots = {k: v for k, v in roots.items() if v}

    def snap(self) -> dict[str, float]:
        return {role: _tree_cpu(pid) for role, pid in self.roots.items()}

    @staticmethod
    def delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
        return {k: round(after[k] - before.get(k, 0.0), 2) for k in after}


# --- measuring -----------------------------------------------------------------------------------

#: Checked in the page on every animation frame (page.wait_for_function, polling "raf"): has
#: the visit reached a stage yet? Not Playwright's locator waits: they look again after 0, 20,
#: 50, 100, 100 ms and then only every 500 ms, so a page drawn 0.3 s in was timed 0.3-0.8 s
#: late, a quantum as large as half the empty page.
_STAGE_JS = """([stage, spec, drawn]) => {
  const all = (css) => Array.from(document.querySelectorAll(css));
  const byTestId = (id) => all(`[data-testid="${id}"]`);
  const hasText = (text) => (document.body.textContent || "").includes(text);
  const errors = byTestId("stAlertContentError").length + byTestId("stException").length;
  if (stage === "key") {
    return errors > 0 || (spec.metric && byTestId("stMetric").some(
             (m) => m.textContent.includes(spec.metric)))
      || spec.texts.some((t) => t.startsWith("testid:") ? byTestId(t.slice(7)).length > 0
                                                          : hasText(t));
  }
  if (stage === "charts") {
    return errors > 0
      || all(".js-plotly-plot").filter((c) => c.querySelector(drawn)).length >= spec.charts;
  }
  if (stage === "footer") { return hasText("Data from "); }
  const status = byTestId("stStatusWidget")[0];  // "status": Streamlit's running indicator gone
  return !status || !status.checkVisibility() || status.getClientRects().length === 0;
}"""
#: The stages of a visit, in order (see visit).
STAGES = ("key", "charts", "footer", "status")


def _wait_stage(page, stage: str, spec: PageSpec, ms: int) -> None:
    """Wait, checking every animation frame, until the page has reached `stage`."""
    page.wait_for_function(_STAGE_JS, arg=[stage, {"metric": spec.metric, "texts": list(spec.texts),
                                                   "charts": spec.charts}, CHART_DRAWN],
                           polling="raf", timeout=ms)


def visit(context, url: str, spec: PageSpec, timeout_s: float,
          meter: CpuMeter | None = None) -> dict:
    """Open url in a new tab; return seconds until the page is drawn, any error shown, and the
    CPU seconds each process tree spent meanwhile."""
    ms = int(timeout_s * 1000)
    cpu0 = meter.snap() if meter else {}
    page = context.new_page()
    try:
        t0 = time.perf_counter()
        stages = {}

        def mark(name: str) -> None:
            stages[name] = round(time.perf_counter() - t0, 3)

        frames = {"sent": [], "received": []}

        def on_socket(ws) -> None:  # Streamlit's /_stcore/stream: rerun request -> deltas
            mark("socket")
            ws.on("framesent", lambda _: frames["sent"].append(time.perf_counter()))
            ws.on("framereceived", lambda _: frames["received"].append(time.perf_counter()))

        page.on("websocket", on_socket)
        page.goto(url, timeout=ms)
        mark("loaded")
        for stage in STAGES:
            _wait_stage(page, stage, spec, ms)
            mark(stage)
        t1 = time.perf_counter()
        errors = page.get_by_test_id("stAlertContentError").or_(
            page.get_by_test_id("stException"))
        if frames["sent"]:
            stages["first_sent"] = round(frames["sent"][0] - t0, 3)
        if frames["received"]:
            stages["last_received"] = round(frames["received"][-1] - t0, 3)
        error = None
        if errors.count():
            error = " ".join(errors.first.inner_text().split())[:300]
        cpu = CpuMeter.delta(cpu0, meter.snap()) if meter else {}
        return {"s": round(t1 - t0, 3), "t0": t0, "t1": t1, "error": error, "stages": stages,
                "cpu": cpu}
    except Exception as exc:  # noqa: BLE001 - a timed-out page is a result, not a crash
        t1 = time.perf_counter()
        waited_for = next((n for n in STAGES if n not in stages), "status")
        return {"s": round(t1 - t0, 3), "t0": t0, "t1": t1, "cpu": {}, "stages": stages,
                "error": f"waiting for {waited_for}: {type(exc).__name__}: "
                         f"{str(exc).splitlines()[0][:200]}"}
    finally:
        page.close()


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _wait_cache_expired(proxy: ApiProxy | None, last_visit_end: float) -> None:
    """Sleep until every cached answer has expired: TTL + 1 s after the last API call ended
    (a call the dashboard gave up on is waited for, at most 5 minutes)."""
    deadline = time.perf_counter() + 300
    while time.perf_counter() < deadline:
        last = proxy.last_end() if proxy else last_visit_end
        wait = last + CACHE_TTL_S + 1 - time.perf_counter()
        if wait <= 0:
            return
        time.sleep(min(wait, 1.0))


def failed_task_ids(api: str, n: int) -> list[str]:
    """Up to n failed task ids from the last hour (fallback: any outcome, 24 h)."""
    for params in ({"window": "1h", "outcome": "failed"}, {"window": "24h"}):
        tasks = httpx.get(f"{api}/api/v1/tasks", params={**params, "limit": 200},
                          timeout=120).json().get("tasks") or []
        if tasks:
            return [t["task_id"] for t in tasks[::max(1, len(tasks) // max(n, 1))]][:n]
    return []


def run(base: str, empty_base: str, proxy: ApiProxy | None, api: str, windows: list[str],
        pages: list[PageSpec], repeat: int, timeout_s: float, log, pids: dict[str, int]) -> dict:
    from playwright.sync_api import sync_playwright

    task_ids = failed_task_ids(api, repeat * len(windows))
    results: dict[str, dict] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1600})
            meter = CpuMeter({**pids, "browser": browser_root()})
            # untimed: the first script run imports Plotly and pandas; the tab caches the JS
            started = time.perf_counter()
            warm = visit(context, f"{base}/alerts", PAGES[6], timeout_s)
            log(f"warm-up load of /alerts: {time.perf_counter() - started:.1f} s "
                f"(error: {warm['error']})")
            last_end = time.perf_counter()
            id_iter = iter(task_ids)
            for window in windows:
                for spec in (EMPTY, *pages):
                    key = f"{window} {spec.name}"
                    results[key] = {"window": window, "page": spec.name, "cold": [], "warm": [],
                                    "errors": [], "cold_calls": [], "load": []}
                for rep in range(repeat):
                    for spec in (EMPTY, *pages):
                        key = f"{window} {spec.name}"
                        task_id = None
                        if "{task}" in spec.path:
                            task_id = next(id_iter, task_ids[0] if task_ids else None)
                            if not task_id:
                                continue
                        url = empty_base if spec is EMPTY else _url(base, spec, window, task_id)
                        _wait_cache_expired(proxy, last_end)
                        r = results[key]
                        r["load"].append(loadavg()[0])
                        for kind in ("cold", "warm"):
                            got = visit(context, url, spec, timeout_s, meter)
                            last_end = got["t1"]
                            r[kind].append(got["s"])
                            if got["error"]:
                                r["errors"].append(f"{kind}: {got['error']}")
                            calls = proxy.between(got["t0"], got["t1"]) if proxy else []
                            if kind == "cold":
                                r["cold_calls"].append(
                                    [(_call_name(c["path"]), round(c["end"] - c["start"], 3),
                                      c["status"]) for c in calls])
                            elif calls:
                                r.setdefault("warm_api_calls", []).append(len(calls))
                            r.setdefault(f"{kind}_stages", []).append(got.get("stages"))
                            r.setdefault(f"{kind}_cpu", []).append(got.get("cpu"))
                            log(f"{window:>4} {spec.name:<12} rep {rep + 1} {kind}: "
                                f"{got['s']:6.2f} s, {len(calls)} API calls "
                                f"{sum(c['end'] - c['start'] for c in calls):6.2f} s "
                                f"{got.get('stages')} cpu {got.get('cpu')}"
                                + (f"  ERROR {got['error']}" if got["error"] else ""))
        finally:
            browser.close()
    return results


def _cpu_median(samples: list[dict]) -> dict[str, float]:
    roles = sorted({k for sample in samples if sample for k in sample})
    return {role: round(statistics.median([x.get(role, 0.0) for x in samples if x]), 2)
            for role in roles}


def _ratio(page_s: list[float], empty_s: list[float] | None) -> float | None:
    """Median visit time of a page over that of the empty page in the same run."""
    if not page_s or not empty_s:
        return None
    return round(statistics.median(page_s) / statistics.median(empty_s), 2)


def summarize(results: dict) -> dict:
    out = {}
    for key, r in results.items():
        if not r["cold"]:
            continue
        empty = results.get(f"{r['window']} {EMPTY.name}", {})
        worst = max(range(len(r["cold"])), key=r["cold"].__getitem__)
        api_by_call: dict[str, list[float]] = {}
        for calls in r["cold_calls"]:
            per: dict[str, float] = {}
            for name, secs, _ in calls:
                per[name] = per.get(name, 0.0) + secs
            for name, secs in per.items():
                api_by_call.setdefault(name, []).append(secs)
        api_median = {name: round(statistics.median(v), 3) for name, v in api_by_call.items()}
        script = [st["last_received"] - st["first_sent"] for st in r.get("cold_stages", [])
                  if st and "first_sent" in st and "last_received" in st]
        after = [w - st["last_received"] for w, st in zip(r["cold"], r.get("cold_stages", []))
                 if st and "last_received" in st]
        out[key] = {
            "window": r["window"], "page": r["page"],
            "cold_script_s_median": round(statistics.median(script), 2) if script else None,
            "cold_draw_after_s_median": round(statistics.median(after), 2) if after else None,
            "cold_median_s": round(statistics.median(r["cold"]), 2),
            "cold_vs_empty": _ratio(r["cold"], empty.get("cold")),
            "warm_vs_empty": _ratio(r["warm"], empty.get("warm")),
            "cold_max_s": round(max(r["cold"]), 2),
            "warm_median_s": round(statistics.median(r["warm"]), 2),
            "warm_max_s": round(max(r["warm"]), 2),
            "cold_s": r["cold"], "warm_s": r["warm"],
            "cold_api_s_median": round(statistics.median(
                [sum(c[1] for c in calls) for calls in r["cold_calls"]]), 2)
            if r["cold_calls"] else None,
            "api_median_s_by_call": dict(sorted(api_median.items(), key=lambda kv: -kv[1])),
            "slowest_cold_calls": r["cold_calls"][worst] if r["cold_calls"] else [],
            "warm_api_calls": r.get("warm_api_calls", []),
            "cold_cpu_s_median": _cpu_median(r.get("cold_cpu", [])),
            "warm_cpu_s_median": _cpu_median(r.get("warm_cpu", [])),
            "cold_stages": r.get("cold_stages", []), "warm_stages": r.get("warm_stages", []),
            "load1_at_cold": r["load"],
            "errors": r["errors"],
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path,
                        help="dir holding agentsla.duckdb (with --reuse), or where to generate")
    parser.add_argument("--reuse", action="store_true",
                        help="serve an existing --data-dir (a temp copy, timestamps moved to now)")
    parser.add_argument("--in-place", action="store_true",
                        help="with --reuse: serve the dir itself (no copy, no time shift)")
    parser.add_argument("--spans", type=int, default=1_000_000,
                        help="spans to generate without --reuse (~10 per task)")
    parser.add_argument("--keep", action="store_true", help="keep a generated data dir")
    parser.add_argument("--repeat", type=int, default=3, help="cold+warm visits per page")
    parser.add_argument("--windows", default=",".join(WINDOWS),
                        help="comma-separated sidebar windows to time (default 1h,24h)")
    parser.add_argument("--pages", default=",".join(p.name for p in PAGES),
                        help="comma-separated pages: " + ", ".join(p.name for p in PAGES))
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds per visit")
    parser.add_argument("--no-proxy", action="store_true",
                        help="point the dashboard straight at the API (no per-call breakdown)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be positive")
    if args.reuse and args.data_dir is None:
        parser.error("--reuse needs --data-dir")
    if args.in_place and not args.reuse:
        parser.error("--in-place goes with --reuse")
    if not Path(CHROMIUM).exists():
        parser.error(f"no Chromium at {CHROMIUM} (apt-get install chromium, or AGENTSLA_CHROMIUM)")
    wanted = args.pages.split(",")
    unknown = set(wanted) - {p.name for p in PAGES}
    if unknown:
        parser.error(f"unknown pages: {', '.join(sorted(unknown))}")
    pages = [p for p in PAGES if p.name in wanted]
    windows = [w for w in args.windows.split(",") if w]
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731

    temp_dir: Path | None = None
    data_note: dict = {}
    if args.reuse and args.in_place:
        data_dir = args.data_dir
    elif args.reuse:
        if not (args.data_dir / "agentsla.duckdb").exists():
            parser.error(f"{args.data_dir / 'agentsla.duckdb'} does not exist")
        temp_dir = Path(tempfile.mkdtemp(prefix="agentsla-dbench-"))
        data_dir = temp_dir
        try:
            data_note = copy_and_shift(args.data_dir, temp_dir, log)
        except BaseException:  # a failed copy or shift must not leave a 2 GB copy behind
            shutil.rmtree(temp_dir, ignore_errors=True)
            raise
    else:
        data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="agentsla-dbench-"))
        if (data_dir / "agentsla.duckdb").exists():
            parser.error(f"{data_dir}/agentsla.duckdb exists; pass --reuse")
        data_dir.mkdir(parents=True, exist_ok=True)
        if not args.keep:
            temp_dir = data_dir
        log(f"generating ~{args.spans:,} spans into {data_dir}")
        made = _bench_queries().generate(data_dir / "agentsla.duckdb", args.spans,
                                         time.time_ns(), log)
        data_note = {"generated": True, "generate_s": made["generate_s"]}
    server = dashboard = empty_app = proxy = None
    empty_dir = Path(tempfile.mkdtemp(prefix="agentsla-empty-"))
    server_log: list[str] = []
    try:
        data = {**_counts(data_dir / "agentsla.duckdb"), **data_note}
        log(f"data: {data}")
        server = ServerProcess(data_dir, env={"AGENTSLA_LOST_GRACE": "7d"})
        started = time.perf_counter()
        server.start(timeout=300)
        startup_s = time.perf_counter() - started
        threading.Thread(target=_drain, args=(server.proc.stdout, server_log),
                         daemon=True).start()
        log(f"agentsla serve up in {startup_s:.1f} s at {server.api_url}")
        # the copy's findings hour tier is built again from its shifted minutes: time the pages
        # of a server that has kept up, not one still catching up
        log(f"findings evidence current after {server.wait_for_evidence()} s")
        proxy = None if args.no_proxy else ApiProxy(server.api_url)
        dashboard = StreamlitApp(api=proxy.url if proxy else server.api_url)
        log(f"agentsla dashboard at {dashboard.url}")
        (empty_dir / "empty.py").write_text(EMPTY_SCRIPT)
        empty_app = StreamlitApp(script=empty_dir / "empty.py")
        load_before = loadavg()
        raw = run(dashboard.url, empty_app.url, proxy, server.api_url, windows, pages, args.repeat,
                  args.timeout, log, {"dashboard": dashboard.proc.pid, "server": server.proc.pid})
        load_after = loadavg()
    finally:
        for app in (dashboard, empty_app):
            if app:
                app.stop()
        if proxy:
            proxy.close()
        if server and server.proc and server.proc.poll() is None:
            server.stop()
        shutil.rmtree(empty_dir, ignore_errors=True)
        if temp_dir:
            shutil.rmtree(temp_dir, ignore_errors=True)
    summary = summarize(raw)
    result = {"machine": _bench_queries().machine(), "date": time.strftime("%Y-%m-%d"),
              "repeat": args.repeat,
              "goal_ratio": GOAL_RATIO, "cache_ttl_s": CACHE_TTL_S, "data": data,
              "server_startup_s": round(startup_s, 1), "proxy": not args.no_proxy,
              "loadavg_before": load_before, "loadavg_after": load_after, "pages": summary}
    print(f"{'window':<6} {'page':<12} {'cold s':>7} {'(max)':>6} {'warm s':>7} {'(max)':>6} "
          f"{'÷empty':>7} {'script':>7} {'API':>6} {'draw':>6}  "
          f"{'CPU cold: dash/browser/server':>29}  "
          "slowest API call (cold)")
    for r in summary.values():
        top = next(iter(r["api_median_s_by_call"].items()), ("", 0.0))
        cc = r["cold_cpu_s_median"]
        cold_cpu = "/".join(f"{cc.get(k, 0):.1f}" for k in ("dashboard", "browser", "server"))
        num = lambda v: "" if v is None else f"{v:.2f}"  # noqa: E731
        ratio = r["cold_vs_empty"]
        flag = " *" if ratio is not None and ratio > GOAL_RATIO else ""
        print(f"{r['window']:<6} {r['page']:<12} {r['cold_median_s']:>7.2f} "
              f"{r['cold_max_s']:>6.1f} "
              f"{r['warm_median_s']:>7.2f} {r['warm_max_s']:>6.1f} {num(ratio):>7} "
              f"{num(r['cold_script_s_median']):>7} {num(r['cold_api_s_median']):>6} "
              f"{num(r['cold_draw_after_s_median']):>6}  {cold_cpu:>29}  "
              f"{top[0]} {top[1]:.2f}{flag}"
              + (f"  errors: {len(r['errors'])}" if r["errors"] else "")
              + ("  (some warm visits re-called the API: cache expired)"
                 if r["warm_api_calls"] else ""))
    print("seconds, medians; script = Streamlit run seen on the websocket (rerun request to last "
          "message, API calls included); draw = browser work after the last message")
    print(f"÷empty = cold median over the empty Streamlit page's, same run; * above the "
          f"{GOAL_RATIO}× goal · load average before {load_before}, "
          f"after {load_after}")
    print(json.dumps(result, separators=(",", ":")))


if __name__ == "__main__":
    main()
