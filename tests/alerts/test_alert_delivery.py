"""Delivery guarantees with a compressed clock: a receiver down for 10 minutes (and an
agentsla restart during the outage) gets every notification once, in order, after it recovers."""

from __future__ import annotations

import asyncio

import httpx
from alertkit import FakeQuery

from agentsla.alerts.config import parse_routing
from agentsla.alerts.routing.dispatch import Dispatcher
from agentsla.alerts.rules.evaluator import Evaluator
from agentsla.alerts.rules.expr import parse
from agentsla.alerts.routing.nflog import NotificationLog
from agentsla.alerts.notify.pipeline import Deliverer, notify_pipeline
from agentsla.alerts.notify.receivers import build_integrations
from agentsla.alerts.notify.retry import Retrier
from agentsla.alerts.rules.groups import Rule, RuleGroup
from agentsla.alerts.state import Store

RULE = Rule("ToolErrors", parse("hop_error_rate by (hop_name) [2m] > 0.02"), labels={"severity": "P1"})


class NoMute:
    def mutes(self, labels, now):
        return False


def _life(path, hook_url, client):
    store = Store(path)
    nflog = NotificationLog(store)
    routing = parse_routing({
        "route": {"receiver": "hook", "group_by": ["alertname"], "group_wait": "10s",
                  "group_interval": "1m", "repeat_interval": "4h"},
        "receivers": [{"name": "hook", "webhook_configs": [{"url": hook_url}]}]}, "t")
    integrations = build_integrations(routing.receivers, client)
    dispatcher = Dispatcher(routing.route, integrations, notify_pipeline(NoMute(), nflog))
    deliverer = Deliverer(nflog, {i.key: i for i in integrations["hook"]},
                          Retrier(initial_s=1, max_s=60))
    return store, nflog, dispatcher, deliverer


def test_receiver_down_ten_minutes_gets_everything_once(tmp_path, hook):
    q = FakeQuery()
    evaluator = Evaluator([RuleGroup("g", (RULE,))], interval_s=5)
    hook.down = True
    path = tmp_path / "alerts.sqlite"

    async def scenario():
        async with httpx.AsyncClient() as client:
            store, nflog, dispatcher, deliverer = _life(path, hook.url, client)
            for t in range(0, 901, 5):
                if t == 0:
                    q.set("hop_error_rate", ({"hop_name": "a"}, 0.5, 100))
                if t == 70:
                    q.set("hop_error_rate", ({"hop_name": "a"}, 0.5, 100), ({"hop_name": "b"}, 0.5, 100))
                if t == 190:
                    q.set("hop_error_rate", ({"hop_name": "b"}, 0.5, 100))
                if t == 300:   # agentsla restarts in the middle of the outage
                    store.close()
                    store, nflog, dispatcher, deliverer = _life(path, hook.url, client)
                if t == 600:
                    hook.down = False
                dispatcher.ingest(evaluator.eval(t, q), t)
                dispatcher.tick(t)
                await deliverer.deliver(t)
            outbox = nflog.outbox()
            store.close()
            return outbox

    outbox = asyncio.run(scenario())
    delivered = hook.ok()
    # three decisions: a fires; b fires too; a resolves (b still firing)
    assert [sorted((x["labels"]["hop_name"], x["status"]) for x in d.json["alerts"]) for d in delivered] == [
        [("a", "firing")],
        [("a", "firing"), ("b", "firing")],
        [("a", "resolved"), ("b", "firing")],
    ]
    ids = [d.headers["webhook-id"] for d in delivered]
    assert len(set(ids)) == 3                                   # each once
    assert ids == [row["id"] for row in outbox]                 # in the order decided
    assert all(row["status"] == "sent" for row in outbox)
    failed_ids = {d.headers["webhook-id"] for d in hook.deliveries if d.status != 200}
    assert ids[0] in failed_ids                                 # it was retried, under the same id
    assert outbox[0]["attempts"] > 5                            # backoff kept trying for 10 min


def test_permanent_failure_is_not_retried(tmp_path, hook):
    q = FakeQuery()
    q.set("hop_error_rate", ({"hop_name": "a"}, 0.5, 100))
    evaluator = Evaluator([RuleGroup("g", (RULE,))])
    hook.fail_next, hook.fail_status = 100, 400

    async def scenario():
        async with httpx.AsyncClient() as client:
            store, nflog, dispatcher, deliverer = _life(tmp_path / "a.sqlite", hook.url, client)
            for t in range(0, 120, 5):
                dispatcher.ingest(evaluator.eval(t, q, force=True), t)
                dispatcher.tick(t)
                await deliverer.deliver(t)
            outbox = nflog.outbox()
            store.close()
            return outbox

    outbox = asyncio.run(scenario())
    assert len(hook.deliveries) == 1
    assert outbox[0]["status"] == "failed" and "HTTP 400" in outbox[0]["last_error"]
