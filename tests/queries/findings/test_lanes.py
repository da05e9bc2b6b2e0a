"""Detectors on several lanes: one findings answer spread over sibling stores (DuckDB cursors)."""

from __future__ import annotations

import threading

import duckdb
import pytest
from test_detectors import CASES, EVERYTHING, _tagged
from test_task_findings import ghost_task, masked_429

from agentsla.queries import findings
from agentsla.queries.engines.duckdb import DuckDBStore
from agentsla.queries.findings import find_findings


@pytest.fixture(scope="module")
def every_case(load_module):
    """One store holding every detector case (each finding type raised at least once)."""
    return load_module([r for i, (shape, _) in enumerate(CASES) for r in _tagged(shape(), i)])


@pytest.mark.parametrize("threads", [2, 3, 12])
def test_lanes_answer_what_one_lane_answers(every_case, threads):
    alone = find_findings(every_case, *EVERYTHING, None, {})
    assert {f["type"] for f in alone} == set(findings.DETECTORS)
    # twice: the second answer takes the detectors in the order the first one's times gave
    for _ in range(2):
        assert find_findings(every_case, *EVERYTHING, None, {}, threads=threads) == alone
    assert every_case._siblings == set()  # each answer closed the cursors it opened


def test_detectors_run_at_once(every_case, monkeypatch):
    # two detectors that each wait for the other: one lane would time out at the barrier
    met = threading.Barrier(2, timeout=10)
    ran_on = set()
    for name in ("ghost_work", "saturation"):
        module = findings.DETECTORS[name]

        def waiting(store, params, th, _detect=module.detect):
            ran_on.add(threading.current_thread().name)
            met.wait()
            return _detect(store, params, th)

        monkeypatch.setattr(module, "detect", waiting)
    found = find_findings(every_case, *EVERYTHING, None, {}, threads=2)
    assert len(ran_on) == 2
    assert {"ghost_work", "saturation"} <= {f["type"] for f in found}


def test_a_failing_lane_fails_the_answer_and_closes_its_siblings(every_case, monkeypatch):
    def broken(store, params, th):
        raise RuntimeError("detector broke")

    monkeypatch.setattr(findings.DETECTORS["stream_stall"], "detect", broken)
    with pytest.raises(RuntimeError, match="detector broke"):
        find_findings(every_case, *EVERYTHING, None, {}, threads=3)
    assert every_case._siblings == set()
    assert find_findings(every_case, *EVERYTHING, "ghost_work", {}, threads=3)  # still usable


def test_one_threads_asks_for_no_sibling(every_case, monkeypatch):
    def refuse():
        raise AssertionError("a sibling was asked for")

    monkeypatch.setattr(every_case, "sibling", refuse)
    assert find_findings(every_case, *EVERYTHING, None, {}, threads=1)


@pytest.fixture
def ghost_among_others(load):
    tasks = [ghost_task(0)] + [masked_429(i * 2_000.0) for i in range(1, 8)]
    return load([r for t in tasks for r in t.rows]), tasks[0].task_id


def test_task_findings_on_lanes(ghost_among_others):
    # the task's own spans are the scope's temporary tables, which a sibling cursor cannot see:
    # they stay on the asking store; the findings of the time around it take the lanes
    store, task_id = ghost_among_others
    alone = find_findings(store, *EVERYTHING, None, {}, task_id=task_id)
    assert "ghost_work" in {f["type"] for f in alone}
    for threads in (2, 3):
        assert find_findings(store, *EVERYTHING, None, {}, task_id=task_id,
                             threads=threads) == alone
    assert store._siblings == set()


def test_a_tasks_own_findings_run_beside_those_of_its_time(ghost_among_others, monkeypatch):
    # ghost_work over the task alone (the asking store) waits for ghost_work over the time
    # around it (a sibling): one after the other, the first would time out at the barrier
    store, task_id = ghost_among_others
    met = threading.Barrier(2, timeout=10)
    module = findings.DETECTORS["ghost_work"]
    ran_on = []

    def waiting(on, params, th, _detect=module.detect):
        ran_on.append(threading.current_thread().name)
        met.wait()
        return _detect(on, params, th)

    monkeypatch.setattr(module, "detect", waiting)
    found = find_findings(store, *EVERYTHING, "ghost_work", {}, task_id=task_id, threads=2)
    assert len(set(ran_on)) == 2
    assert [f["type"] for f in found] == ["ghost_work"]


def test_interrupting_a_store_interrupts_its_siblings():
    con = duckdb.connect()
    store = DuckDBStore(con.cursor())
    twin = store.sibling()
    failed: list[BaseException] = []

    def long_query():
        try:
            twin._con.execute("select count(*) from range(10000000000) a(x) where x % 7 = 3")
        except BaseException as exc:  # noqa: BLE001: the test inspects it
            failed.append(exc)

    running = threading.Thread(target=long_query)
    running.start()
    for _ in range(200):  # until the interrupt lands on a running query
        store.interrupt()
        running.join(0.05)
        if not running.is_alive():
            break
    assert not running.is_alive()
    assert failed and isinstance(failed[0], duckdb.InterruptException)
    store.close()
    assert store._siblings == set()
    con.close()
