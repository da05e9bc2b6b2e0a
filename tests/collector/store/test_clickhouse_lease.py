"""The alert lease: one evaluator at a time among the holders of one store's lease.

chdb allows one data path per process, so two `serve` processes cannot share a chdb store
here: the holders are two Lease objects (and two AlertServices) over one chdb session. (A
DuckDB file admits one process, so DuckDB holds no lease.) Clocks are explicit (seconds), so
every interleaving is chosen by the test; the ttl is 30 s, so a claim settles after 5 s and a
holder renews every 10 s.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "alerts"))
from alertkit import HookServer  # noqa: E402 - the alert tests' recording receiver

from agentsla.alerts.lease import Lease
from agentsla.alerts.service import AlertService
from agentsla.collector.store.clickhouse.lease import ClickHouseLeases
from agentsla.collector.store.clickhouse.url import parse_store_url
from agentsla.collector.store.lease import Claim
from agentsla.config import load_config
from agentsla.queries.engines.clickhouse import open_runner, store_factory

TTL = 30.0
T = 1_780_000_000.0
NS = 10**9


@pytest.fixture(scope="module")
def chdb_runner(tmp_path_factory):
    runner = open_runner(parse_store_url(f"chdb://{tmp_path_factory.mktemp('lease')}"))
    yield runner
    runner.close()


@pytest.fixture
def table(chdb_runner):
    """The store's lease table, emptied (the chdb session is the module's)."""
    chdb_runner.execute("truncate table default.agentsla_leases")
    return ClickHouseLeases(chdb_runner, "default")


def _pair(table):
    return Lease(table, "a", TTL), Lease(table, "b", TTL)


def test_the_first_claim_leads_once_settled_and_the_other_follows(table):
    a, b = _pair(table)
    assert not a.holds(T)            # claimed term 1, not settled yet
    assert not b.holds(T + 1)        # a's claim is live: b follows, claims nothing
    assert not a.holds(T + 4)
    assert a.holds(T + 5) and not b.holds(T + 5)
    assert [c.holder for c in table.claims("alerts")] == ["a"]


def test_of_two_claims_on_one_term_the_earlier_wins(table):
    """Both saw no lease and claimed term 1 (b a little later): a leads, b never does."""
    a, b = _pair(table)
    assert not a.holds(T)
    table.write("alerts", Claim(1, "b", int((T + 0.5) * NS), int((T + 30.5) * NS)),
                int((T + 0.5) * NS))
    assert not b.holds(T + 6) and a.holds(T + 6)
    assert not b.holds(T + 29) and a.holds(T + 29)


def test_a_renewing_holder_keeps_the_lease(table):
    a, b = _pair(table)
    timeline = [(a.holds(T + s), b.holds(T + s + 0.5)) for s in range(0, 200, 2)]
    assert timeline[:3] == [(False, False)] * 3  # settling
    assert all(t == (True, False) for t in timeline[3:])


def test_a_follower_takes_over_after_the_holder_stops_and_never_overlaps(table):
    """a holds, then stalls (a dead process, a long pause) from 20 s to 100 s, then comes back."""
    a, b = _pair(table)
    leaders = []
    for s in range(0, 150):
        now = T + s
        got = {"a": a.holds(now) if not 20 <= s < 100 else False, "b": b.holds(now + 0.25)}
        assert not (got["a"] and got["b"]), f"two evaluators at {s} s"
        leaders.append("".join(k for k, v in got.items() if v) or "-")
    # a leads from 5 s; its last renewal (at 15 s) lasts to 45 s; b claims term 2 at 45 s and
    # leads from 50 s; a, back at 100 s, finds b's live lease and follows
    assert set(leaders[5:20]) == {"a"}
    assert set(leaders[20:45]) == {"-"} and leaders[50:] == ["b"] * 100
    assert {c.term for c in table.claims("alerts")} == {2}


def test_a_released_lease_passes_on_without_waiting_out_the_ttl(table):
    a, b = _pair(table)
    assert not a.holds(T) and a.holds(T + 5)
    a.release(T + 6)
    assert not a.leading
    assert not b.holds(T + 7) and b.holds(T + 12)  # b's own claim settles, as any claim
    assert not a.holds(T + 13)


RULES = """\
groups:
  - name: lease
    rules:
      - alert: NothingIngested
        expr: spans_ingested [1m] < 1
        labels: {severity: P2}
"""


def _config(tmp_path, hook_url):
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES)
    alerts = {"default_rules": False, "slo_rules": False, "rule_files": [str(rules)],
              "evaluation_interval": "1s",
              "route": {"receiver": "hook", "group_wait": "0s", "group_interval": "1s"},
              "receivers": [{"name": "hook", "webhook_configs": [{"url": hook_url}]}]}
    return dataclasses.replace(load_config(environ={}), alerts=alerts)


def test_two_alert_services_over_one_chdb_store_evaluate_one_at_a_time(tmp_path, chdb_runner):
    """Two services (two `serve` processes' alerting) over one store: one evaluates and
    notifies, the other only answers; when the first stops, the second takes over."""
    chdb_runner.execute("truncate table default.agentsla_leases")
    stores = store_factory(chdb_runner)
    table = ClickHouseLeases(chdb_runner, "default")
    clock = [T]
    with HookServer() as hook:
        config = _config(tmp_path, hook.url)
        one, two = (AlertService(config, stores, tmp_path / name, clock=lambda: clock[0],
                                 lease=Lease(table, name, TTL)) for name in ("one", "two"))

        async def run(services, start_s, end_s):
            for s in range(start_s, end_s, 5):  # a round every 5 s of the clock
                clock[0] = T + s
                for service in services:
                    await service.tick(T + s)

        # the store is empty: after a full minute watched, "nothing ingested" fires
        asyncio.run(run((one, two), 0, 90))
        assert [a["state"] for a in one.current()] == ["firing"] and two.current() == []
        firing = [d for d in hook.ok() if d.json["status"] == "firing"]
        assert len(firing) == 1
        asyncio.run(one.stop())  # releases the lease: `two` takes over once its claim settles
        asyncio.run(run((two,), 90, 160))
        assert [a["state"] for a in two.current()] == ["firing"] and two.lease.leading
        asyncio.run(two.stop())
