"""The first failing hop is one structured value end to end, and an incident's headline is the
dominant one over the incident, moving as the Pareto shifts.

The story (seconds after T0): chat tasks fail at the scheduler `schedule task` (timeout) from
40 s to 90 s, five of them; then at the model `gpt-4o (eu) beta` (rate_limited) from 110 s to
170 s, eight of them. The P0 alert fires at 100 s, while the scheduler is all it has seen; by
180 s the model caused 8 of the incident's 13 blamed tasks. Hop names hold spaces and
parentheses on purpose: nothing may split them.
"""

from __future__ import annotations

import asyncio
import dataclasses

import duckdb
import pytest

from alertkit import HookServer
from queryrows import NS, T0, insert, span, task
from agentsla.alerts.incidents.export import render
from agentsla.alerts.incidents.report import document
from agentsla.alerts.service import AlertService
from agentsla.collector.store.schema import migrate
from agentsla.config import load_config
from agentsla.contract import FailingHop
from agentsla.queries.engines.duckdb import cursor_stores

SCHEDULER = FailingHop("scheduler", "schedule task", "timeout")
MODEL = FailingHop("model", "gpt-4o (eu) beta", "rate_limited")
RULES = """\
groups:
  - name: headline
    rules:
      - alert: TaskSuccessLow
        expr: task_success_rate by (task_type) [2m] < 0.5
        min_tasks: 3
        labels: {severity: P0}
"""


def _failed(i: int, hop: FailingHop, end_s: float) -> tuple[dict, dict]:
    task_id = f"{hop.kind}-{i}"
    row = task(task_id, "failed", end_s=end_s, ffh_kind=hop.kind, ffh_name=hop.name,
               ffh_reason=hop.reason)
    failing = span(f"{i:016x}", None, end_s * 1000 - 500, end_s * 1000, task_id=task_id,
                   hop_kind=hop.kind, hop_name=hop.name, error_type=hop.reason,
                   trace_id=row["trace_id"])
    return row, failing


@pytest.fixture
def world(tmp_path):
    con = duckdb.connect()
    migrate(con)
    rows = [_failed(i, SCHEDULER, 40 + 12.5 * i) for i in range(5)] + \
        [_failed(10 + i, MODEL, 110 + 60 * i / 7) for i in range(8)]
    insert(con, tasks=[r for r, _ in rows], spans=[s for _, s in rows])
    (tmp_path / "rules.yaml").write_text(RULES)
    yield con, tmp_path
    con.close()


def test_headline_and_hop_stay_structured(world):
    con, tmp = world
    clock = [0.0]
    with HookServer() as hook:
        alerts = {"default_rules": False, "slo_rules": False,
                  "rule_files": [str(tmp / "rules.yaml")],
                  "route": {"receiver": "hook", "group_wait": "0s", "group_interval": "1m",
                            "repeat_interval": "1m"},
                  "receivers": [{"name": "hook", "webhook_configs": [{"url": hook.url}]}]}
        config = dataclasses.replace(load_config(environ={}), alerts=alerts)
        svc = AlertService(config, cursor_stores(con), tmp / "data", clock=lambda: clock[0])
        store = svc.incidents.store
        headlines = []

        async def at(seconds: float) -> None:
            clock[0] = T0 / NS + seconds
            await svc.tick(clock[0])
            [incident] = store.list()
            headlines.append((incident.first_failing_hop, incident.first_failing_hop_share))

        async def go():
            await at(100)
            await at(180)
            doc = document(store, store.list()[0].id, clock[0])
            await at(250)
            await svc.stop()
            return doc
        doc = asyncio.run(go())
        # repeat_interval 1m: the firing alert is told again at 180 s and 250 s
        sent, again, last = [a for d in hook.ok() for a in d.json["alerts"]]
    incident_id = doc["incident"]["id"]
    # the notification carries the hop as data, exactly as materialized (no span ids: it
    # stands for all the window's blamed tasks), with its share
    assert sent["context"]["first_failing_hop"] == SCHEDULER.to_json()
    assert sent["context"]["first_failing_hop_share"] == 1.0
    assert sent["annotations"]["first_failing_hop"] == "scheduler schedule task (timeout)"
    assert sent["context"]["incident"] == {"id": incident_id, "first_failing_hop_share": 1.0,
                                           "first_failing_hop": SCHEDULER.to_json()}
    # ...and the incident's headline, as the last enrichment pass left it: the scheduler at
    # 180 s (the pass at 180 s runs after that round's notification), the model at 250 s
    assert again["context"]["first_failing_hop"] == MODEL.to_json()  # the alert's own window
    assert again["context"]["incident"]["first_failing_hop"] == SCHEDULER.to_json()
    assert last["context"]["incident"] == {"id": incident_id, "first_failing_hop": MODEL.to_json(),
                                           "first_failing_hop_share": pytest.approx(8 / 13)}
    # the headline moved with the Pareto: the scheduler alone at 100 s, the model at 180 s
    assert headlines == [(SCHEDULER, 1.0), (MODEL, pytest.approx(8 / 13)),
                         (MODEL, pytest.approx(8 / 13))]
    # the detection keeps what the alert said when it fired
    assert [a["first_failing_hop"] for a in doc["incident"]["alerts"]] == [SCHEDULER.to_json()]
    assert doc["incident"]["first_failing_hop"] == MODEL.to_json()
    markdown = render(doc, "md").text
    assert "First failing hop: model gpt-4o (eu) beta (rate_limited), 62% of blamed tasks." in markdown
    assert "(first failing hop scheduler schedule task (timeout))" in markdown
    html = render(doc, "html").text
    assert "<dd>model gpt-4o (eu) beta (rate_limited), 62% of blamed tasks</dd>" in html
