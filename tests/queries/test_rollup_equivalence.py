"""Rollup answers equal raw answers: simulator scenarios through a real server killed with -9,
random out-of-order traffic through the writer, and histogram quantiles within the stated 1.1 %.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from agentsla.collector.store import rollups
from agentsla.collector.store.database import open_store
from agentsla.collector.store.writer import TaskWriter
from agentsla.commands.rollups import compare
from agentsla.config import load_config
from agentsla.queries.engines.duckdb import DuckDBStore
from agentsla.queries.hops import hop_stats
from agentsla.queries.sla import sla_totals
from agentsla.simulator.runner import run
from queryrows import NS, T0, insert, span, task
from taskanswers import seven_task_answers, task_answers
from serverproc import ServerProcess
from spanfactory import BASE_NS, make_span

MINUTE = 60 * NS


def _tables(con) -> dict[str, list[tuple]]:
    return {t: rollups.summed_rows(con, t, r)
            for r in rollups.ROLLUPS for t in (r.table, r.table + rollups.HOURLY)}


def _assert_rollups_match_raw(con, windows: list[tuple[int, int]]) -> None:
    store = DuckDBStore(con)
    for start_ns, end_ns in windows:
        assert compare(store, load_config(), start_ns, end_ns) == [], (start_ns, end_ns)
    live = _tables(con)
    rollups.rebuild(con)
    assert _tables(con) == live  # what the writer kept is what the stored rows give


def test_simulator_scenarios_on_a_real_server_killed_mid_run(tmp_path: Path):
    server = ServerProcess(tmp_path / "data").start()
    try:
        began = time.time_ns()
        for seed, scenario in enumerate(("baseline", "rate_limit_storm", "model_long_tail",
                                         "runaway_loop")):
            run(scenario, seed=seed, tasks=30, endpoint=server.otlp_url, speed=0)
    finally:
        server.kill()  # SIGKILL: acknowledged spans are committed, rollups with them
    # the CLI check over the file the killed server left
    check = subprocess.run(
        [sys.executable, "-m", "agentsla", "rollups", "check", "--data-dir",
         str(tmp_path / "data"), "--window", "1d", "--to", str(time.time() + 3600)],
        capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "0 difference(s)" in check.stderr
    con = open_store(tmp_path / "data" / "agentsla.duckdb")
    try:
        assert con.execute("select sum(finished) from task_minutes").fetchall()[0][0] >= 100
        end = time.time_ns() + 3600 * NS
        _assert_rollups_match_raw(con, [(began - 600 * NS, end), (began + 7 * NS, end - 3590 * NS)])
    finally:
        con.close()


def _random_traffic(rng: random.Random, tasks: int) -> list[dict]:
    """Tasks of a root, an agent and model calls (retried, failing, late), over ~20 minutes."""
    spans = []
    for n in range(tasks):
        trace = f"{n:032x}"
        t0 = rng.uniform(0, 1200_000)  # ms after BASE_NS
        root = make_span(trace_id=trace, span_id=f"{n:08x}00000001", hop_kind="gateway",
                         start_ms=t0, end_ms=t0 + rng.uniform(100, 90_000),
                         task_type=rng.choice(("chat", "search")), tenant_id=rng.choice("ab"),
                         status_code=rng.choice(("unset", "unset", "error")))
        root["task_id"] = f"task-{n}" if rng.random() < 0.7 else None
        if rng.random() < 0.9:  # the others' roots never arrive: declared lost
            spans.append(root)
        for k in range(rng.randint(0, 4)):
            start = t0 + rng.uniform(0, 5000)
            spans.append(make_span(
                trace_id=trace, span_id=f"{n:08x}{k + 2:08x}", parent=root, hop_kind="model",
                model=rng.choice(("gpt-4o", "claude")), start_ms=start,
                end_ms=start + rng.uniform(0, 30_000), retry_attempt=rng.choice((None, 0, 1, 2)),
                error_type=rng.choice((None, None, "timeout", "rate_limited")),
                ttft_ms=rng.choice((None, rng.uniform(1, 900)))))
    return spans


def test_random_out_of_order_traffic_through_the_writer(tmp_path: Path):
    rng = random.Random(15)
    con = open_store(tmp_path / "db.duckdb")
    try:
        writer = TaskWriter(con, replace(load_config().tasks, default_budget=60.0, lost_grace=30.0))
        writer.rollups.merge_rows = 60  # merges between batches, not only pending rows
        spans = _random_traffic(rng, 300)
        rng.shuffle(spans)  # roots before or after children, late spans minutes after
        now = BASE_NS
        for first in range(0, len(spans), 37):
            now += 20 * NS
            writer.write(spans[first:first + 37], now_ns=now)
            if first % 5 == 0:
                writer.sweep_lost(now_ns=now)  # some tasks lost, then found by a late root
        writer.sweep_lost(now_ns=now + 3600 * NS)
        lost = con.execute("select count(*) from tasks where outcome = 'lost'").fetchall()[0][0]
        assert lost > 0
        windows = [(BASE_NS - 600 * NS, now + 7200 * NS), (BASE_NS + 7 * NS, BASE_NS + 1000 * NS),
                   (BASE_NS + 40 * NS, BASE_NS + 340 * NS), (BASE_NS + 3 * NS, BASE_NS + 50 * NS)]
        _assert_rollups_match_raw(con, windows)
    finally:
        con.close()


def _linear_quantile(values: list[float], q: float) -> float:
    """The quantile by linear interpolation (quantile_cont's definition), by hand."""
    ordered = sorted(values)
    h = (len(ordered) - 1) * q
    lo = int(h)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (h - lo) * (ordered[hi] - ordered[lo])


def test_histogram_quantiles_are_within_the_stated_error(con, store):
    rng = random.Random(5)
    durations = [rng.lognormvariate(7, 1.5) for _ in range(3000)]
    # spread over two hours: whole minutes come from the rollups, the edges from raw rows
    insert(con, tasks=[task(f"t{i}", end_s=rng.uniform(0, 7200), duration_ms=d)
                       for i, d in enumerate(durations)],
           spans=[span(f"s{i}", None, 0, 1000 * rng.uniform(0, 7200), hop_kind="model",
                       duration_ms=d) for i, d in enumerate(durations)])
    row = sla_totals(store, T0, T0 + 7300 * NS)
    (hop,) = hop_stats(store, T0 - 7300 * NS, T0 + 7300 * NS)
    for q, key in ((0.5, "latency_p50_ms"), (0.95, "latency_p95_ms"), (0.99, "latency_p99_ms")):
        exact = _linear_quantile(durations, q)
        assert row[key] == pytest.approx(exact, rel=0.011)
        assert hop[key] == pytest.approx(exact, rel=0.011)


HOUR = 60 * MINUTE
H1 = T0 + 2800 * NS  # an hour starts (T0 is 800 s into its hour, 20 s into its minute)
#: [from, to) of a window holding three whole hours, the minutes around them and ragged edges
HOURS_WINDOW = (T0 + 2 * NS, H1 + 3 * HOUR + 630 * NS)


def _delete_inner_hours(con, tier: str) -> None:
    """Delete the stored rows of the window's three whole hours from every task rollup's tier."""
    for rollup in rollups.TASK_ROLLUPS:
        con.execute(f"delete from {rollup.table}{tier}{rollups.STORED} where minute_ns >= ? "
                    f"and minute_ns < ?", [H1, H1 + 3 * HOUR])


def test_whole_hours_of_a_window_come_from_the_hour_tier(con, store):
    """Seven tasks of durations 2..8 s ending: a in the window's ragged first minute, b in a
    whole minute before the first whole hour, c, d and e (failed, its tool call timed out)
    inside the three whole hours, f in a whole minute after them, g in the ragged last minute.
    Every task question equals its answer over raw rows; it stays so with the inner hours'
    minute rows deleted, and loses the inner hours' three tasks with their hour rows deleted."""
    ends = {"a": T0 + 5 * NS, "b": H1 - 1800 * NS, "c": H1 + 1200 * NS, "d": H1 + 4800 * NS,
            "e": H1 + 6000 * NS, "f": H1 + 3 * HOUR + 300 * NS, "g": H1 + 3 * HOUR + 610 * NS}
    blamed = {"outcome": "failed", "ffh_kind": "tool", "ffh_name": "search",
              "ffh_reason": "timeout"}
    insert(con, tasks=[task(name, end_s=(end - T0) / NS, duration_ms=1000.0 * (i + 2),
                            budget_total_ms=60000.0, **(blamed if name == "e" else {}))
                       for i, (name, end) in enumerate(ends.items())])
    rolled = seven_task_answers(store, HOURS_WINDOW)
    _delete_inner_hours(con, "")
    assert task_answers(store, HOURS_WINDOW) == rolled
    _delete_inner_hours(con, rollups.HOURLY)
    left = sla_totals(store, *HOURS_WINDOW)
    assert (left["finished"], left["failed"]) == (4, 0)
