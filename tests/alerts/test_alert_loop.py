"""The alert loop under concurrency: readers see finished rounds only, enrichment never holds up
evaluation, and stopping interrupts and waits for running queries.

The service reads a real in-memory DuckDB through real DuckDB stores. To stop a round at a
chosen point, the stores here are DuckDBStore subclasses that pause (or run a genuinely long
DuckDB query) before one named question: the only test double, standing in for "a query that
happens to take long", which a 2-core test machine cannot produce on cue.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from pathlib import Path

import httpx
from queryrows import NS, T0, insert, span, task
from serverproc import serving

from agentsla.alerts.service import AlertService
from agentsla.api.app import create_api_app
from agentsla.config import load_config
from agentsla.queries.engines.duckdb import DuckDBStore, cursor_stores

T = T0 / NS
WAIT_S = 30.0  # how long a test waits for something that must happen (never a speed claim)
#: A DuckDB query that runs for hours unless interrupted.
ENDLESS = "select sum(a.range * b.range) from range(1000000000) a, range(1000000) b"

RULES = """\
groups:
  - name: loop
    rules:
      - alert: TasksFailing
        expr: task_success_rate [5m] < 0.99
        labels: {severity: P0}
      - alert: ToolErrors
        expr: hop_error_rate{hop_kind="tool"} by (hop_name) [5m] > 0.02
        for: 2s
        labels: {severity: P1}
"""


class Gate:
    """Where stores stop: before the first question whose name starts with `prefix`."""

    def __init__(self, prefix: str, endless: bool = False) -> None:
        self.prefix, self.endless = prefix, endless
        self.reached, self.release, self.finished = (threading.Event(), threading.Event(),
                                                     threading.Event())
        self.armed = True
        self.error: BaseException | None = None

    def stores(self, con):
        """A store factory for AlertService, each store stopping at this gate."""
        gate = self

        class GatedStore(DuckDBStore):
            def rows(self, question, params=None, **fragments):
                if gate.armed and question.startswith(gate.prefix):
                    gate.armed = False
                    gate.reached.set()
                    try:
                        if gate.endless:
                            self._con.execute(ENDLESS).fetchall()
                        else:
                            gate.release.wait(WAIT_S * 4)
                    except BaseException as exc:  # the interrupt we expect
                        gate.error = exc
                        raise
                    finally:
                        gate.finished.set()
                return super().rows(question, params, **fragments)
        return lambda: GatedStore(con.cursor())


def _config(tmp_path: Path, hook_url: str, **server):
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    alerts = {"default_rules": False, "slo_rules": False, "rule_files": [str(rules)],
              "evaluation_interval": "1s", "incidents": {"snapshot_interval": "1s"},
              "route": {"receiver": "hook", "group_by": ["alertname"], "group_wait": "0s",
                        "group_interval": "1s", "repeat_interval": "1h"},
              "receivers": [{"name": "hook", "webhook_configs": [{"url": hook_url}]}]}
    config = load_config(environ={})
    return dataclasses.replace(config, alerts=alerts,
                               server=dataclasses.replace(config.server, **server))


def _outage(con) -> None:
    """Ten failed tasks and a search tool failing 10 of 30 calls, ending 50 s after T0."""
    insert(con, tasks=[task(f"bad{i}", "failed", end_s=50.0) for i in range(10)],
           spans=[span(f"s{i:04d}", None, 40_000, 50_000 - i, task_id=f"bad{i % 10}",
                       hop_kind="tool", hop_name="search",
                       error_type="timeout" if i < 10 else None) for i in range(30)])


def _names(alerts) -> list[tuple[str, str]]:
    return sorted((a["labels"]["alertname"], a["state"]) for a in alerts)


def test_readers_see_the_last_finished_round_never_one_in_progress(con, tmp_path, hook):
    gate = Gate("hop_stats")
    service = AlertService(_config(tmp_path, hook.url), gate.stores(con), tmp_path / "data")
    gate.armed = False
    asyncio.run(service.tick(T + 60))                 # round 1: no data, no alerts
    _outage(con)
    gate.armed = True
    round2 = threading.Thread(target=lambda: asyncio.run(service.tick(T + 61)))
    round2.start()
    try:
        assert gate.reached.wait(WAIT_S)  # TasksFailing evaluated (firing), ToolErrors paused
        # a reader now sees round 1 as it finished, not TasksFailing changed mid-round
        assert service.current(T + 61) == []
    finally:
        gate.release.set()
        round2.join(WAIT_S)
    assert _names(service.current(T + 61)) == [("TasksFailing", "firing"), ("ToolErrors", "pending")]
    asyncio.run(service.stop())


def test_evaluation_goes_on_while_enrichment_is_stuck(con, tmp_path, hook):
    _outage(con)
    gate = Gate("findings/")                          # only enrichment asks for findings
    started = time.monotonic()
    service = AlertService(_config(tmp_path, hook.url), gate.stores(con), tmp_path / "data",
                           clock=lambda: T + 60 + (time.monotonic() - started))

    async def scenario() -> list[str]:
        await service.start()
        try:
            # TasksFailing (P0) fires at once and opens an incident; enrichment then snapshots
            # it and gets stuck in its first findings query
            assert await asyncio.to_thread(gate.reached.wait, WAIT_S)
            deadline = time.monotonic() + WAIT_S
            while not _notified(hook, "ToolErrors") and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            stuck = not gate.finished.is_set()
            assert any(i.severity == "P0" for i in service.incidents.store.open())  # open incident
            return [name for name in ("TasksFailing", "ToolErrors") if _notified(hook, name)] \
                if stuck else ["enrichment was not stuck"]
        finally:
            gate.release.set()
            await service.stop()

    # ToolErrors (for: 2s) fired and was delivered while enrichment was still stuck
    assert asyncio.run(scenario()) == ["TasksFailing", "ToolErrors"]


def _notified(hook, alertname: str) -> bool:
    return any(a["labels"]["alertname"] == alertname and d.json["status"] == "firing"
               for d in hook.ok() for a in d.json["alerts"])


def test_stop_interrupts_a_running_query_and_waits_for_it(con, tmp_path, hook):
    _outage(con)
    gate = Gate("sla_totals", endless=True)           # the round's first query runs for hours
    service = AlertService(_config(tmp_path, hook.url), gate.stores(con), tmp_path / "data",
                           clock=lambda: T + 60)

    async def scenario() -> bool:
        await service.start()
        assert await asyncio.to_thread(gate.reached.wait, WAIT_S)
        await asyncio.wait_for(service.stop(), WAIT_S)
        return gate.finished.is_set()  # the query had ended when stop() returned

    try:
        assert asyncio.run(scenario())
        assert type(gate.error).__name__ == "InterruptException"
        con.close()  # no thread holds a cursor: closing does not race a query
    finally:
        gate.release.set()


def test_an_enrichment_pass_keeps_to_its_budget(con, tmp_path, hook):
    _outage(con)
    gate = Gate("findings/", endless=True)
    service = AlertService(_config(tmp_path, hook.url, enrichment_budget=1.0), gate.stores(con),
                           tmp_path / "data", clock=lambda: T + 60)
    gate.armed = False
    asyncio.run(service.tick(T + 60))                 # the incident opens (and is enriched)
    gate.armed = True
    [incident] = service.incidents.store.list()
    service.enricher.run_once(T + 70)                 # snapshot due; findings run for hours
    assert gate.finished.is_set() and type(gate.error).__name__ == "InterruptException"
    kinds = [e.kind for e in service.incidents.store.entries(incident.id)]
    assert kinds.count("snapshot") == 2               # the pass went on around the failure
    asyncio.run(service.stop())


def test_alert_routes_keep_sqlite_off_the_event_loop(con, tmp_path, hook):
    config = _config(tmp_path, hook.url)
    service = AlertService(config, cursor_stores(con), tmp_path / "data")
    app = create_api_app(cursor_stores(con), config, lambda: {}, extra_routes=service.routes())
    answers: list[int] = []
    with serving(app) as url:
        with service.store.lock:  # as if a long SQLite write held the alert store
            waiting = threading.Thread(target=lambda: answers.append(
                httpx.get(f"{url}/api/v1/alerts", timeout=WAIT_S * 2).status_code))
            waiting.start()
            time.sleep(0.5)  # let /api/v1/alerts reach the store first (ordering, not speed)
            # the event loop is free: another request is answered while /alerts waits
            assert httpx.get(f"{url}/api/v1/health", timeout=WAIT_S).status_code == 200
            assert answers == []
        waiting.join(WAIT_S)
    assert answers == [200]
    asyncio.run(service.stop())
