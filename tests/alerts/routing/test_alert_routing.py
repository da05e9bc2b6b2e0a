"""Routing, grouping, inhibition, silences and the dedup stage, with a recording integration."""

from __future__ import annotations

import pytest

from agentsla.alerts.config import parse_routing
from agentsla.alerts.routing.dispatch import Dispatcher
from agentsla.alerts.rules.evaluator import Alert, State
from agentsla.alerts.routing.inhibit import Inhibitor, parse_inhibit_rules
from agentsla.alerts.routing.nflog import Entry, NotificationLog
from agentsla.alerts.notify.pipeline import needs_update, notify_pipeline
from agentsla.alerts.notify.receivers import Integration
from agentsla.alerts.routing.silence import Silences
from agentsla.alerts.state import Store
from agentsla.errors import PermanentError

ROUTING = {
    "route": {"receiver": "default", "group_by": ["alertname"], "group_wait": "10s",
              "group_interval": "1m", "repeat_interval": "1h",
              "routes": [
                  {"matchers": ['severity="P0"'], "receiver": "pager", "continue": True},
                  {"matchers": ['severity=~"P0|P1"'], "receiver": "chat", "group_by": ["alertname", "hop_name"]},
                  {"matchers": ['severity="P2"'], "receiver": "digest", "group_by": ["severity"],
                   "group_wait": "1d", "group_interval": "1d"},
              ]},
    "receivers": [{"name": n} for n in ("default", "pager", "chat", "digest")],
}


def _alert(name, severity="P1", state=State.FIRING, t=0.0, **labels) -> Alert:
    return Alert({"alertname": name, "severity": severity, **labels}, {}, state, 1.0, t, fired_at=t,
                 resolved_at=t if state == State.RESOLVED else None)


@pytest.mark.parametrize("labels, receivers", [
    ({"severity": "P0"}, ["pager", "chat"]),        # continue: pager and the next match
    ({"severity": "P1"}, ["chat"]),
    ({"severity": "P2"}, ["digest"]),
    ({"severity": "P3"}, ["default"]),             # no child matches: the root takes it
])
def test_route_tree(labels, receivers):
    route = parse_routing(ROUTING, "t").route
    assert [r.receiver for r in route.match(labels)] == receivers


def test_children_inherit_timing_and_override_grouping():
    route = parse_routing(ROUTING, "t").route
    chat, digest = route.routes[1], route.routes[2]
    assert (chat.group_wait_s, chat.repeat_interval_s, chat.group_by) == (10, 3600, ("alertname", "hop_name"))
    assert (digest.group_wait_s, digest.group_interval_s) == (86400, 86400)


@pytest.mark.parametrize("entry, firing, resolved, now, send_resolved, expected", [
    (None, {"a"}, set(), 0, True, True),                                   # first firing
    (None, set(), {"a"}, 0, True, False),                                  # only resolved, never told
    (Entry(frozenset({"a"}), frozenset(), 0), {"a"}, set(), 10, True, False),   # nothing new
    (Entry(frozenset({"a"}), frozenset(), 0), {"a", "b"}, set(), 10, True, True),  # new firing
    (Entry(frozenset({"a", "b"}), frozenset(), 0), {"a"}, {"b"}, 10, True, True),  # b resolved
    (Entry(frozenset({"a", "b"}), frozenset(), 0), {"a"}, {"b"}, 10, False, False),  # ...not wanted
    (Entry(frozenset({"a"}), frozenset(), 0), set(), {"a"}, 10, False, True),   # all resolved: clear
    (Entry(frozenset(), frozenset({"a"}), 0), set(), {"a"}, 10, True, False),   # already told
    (Entry(frozenset({"a"}), frozenset(), 0), {"a"}, set(), 3600, True, True),  # repeat_interval
])
def test_dedup_needs_update(entry, firing, resolved, now, send_resolved, expected):
    assert needs_update(entry, firing, resolved, now, 3600, send_resolved) is expected


@pytest.fixture
def world(tmp_path):
    store = Store(tmp_path / "alerts.sqlite")
    nflog = NotificationLog(store)
    silences = Silences(store)
    firing: list[dict] = []
    routing = parse_routing(ROUTING, "t")
    inhibitor = Inhibitor(routing.inhibit_rules, lambda: firing)

    class Both:
        def mutes(self, labels, now):
            return silences.mutes(labels, now) or inhibitor.mutes(labels, now)

    class Notifier:
        send_resolved = True

    integrations = {name: [Integration(f"{name}/webhook[0]", name, Notifier())]
                    for name in routing.receivers}
    dispatcher = Dispatcher(routing.route, integrations, notify_pipeline(Both(), nflog))

    def sent(receiver):
        return [r for r in nflog.outbox() if r["integration"].startswith(receiver + "/")]

    yield dispatcher, silences, firing, sent, store
    store.close()


def test_grouping_waits_then_batches(world):
    dispatcher, _, _, sent, store = world
    dispatcher.ingest([_alert("ToolErrors", hop_name="search")], 0)
    dispatcher.tick(5)
    assert sent("chat") == []                       # group_wait 10 s
    dispatcher.ingest([_alert("ToolErrors", hop_name="search"), _alert("QueueWait")], 8)
    dispatcher.tick(10)
    assert len(sent("chat")) == 1                   # ToolErrors group flushed
    dispatcher.tick(18)
    assert len(sent("chat")) == 2                   # QueueWait group (created at 8) flushed
    dispatcher.tick(70)
    assert len(sent("chat")) == 2                   # group_interval: nothing changed


def test_silence_mutes_and_renotifies_when_it_expires(world):
    dispatcher, silences, _, sent, _ = world
    alert = _alert("ToolErrors", hop_name="search")
    dispatcher.ingest([alert], 0)
    dispatcher.tick(10)
    assert len(sent("chat")) == 1
    silence = silences.add(['alertname="ToolErrors"'], 20, 200, "ana", "deploying a fix", 20)
    dispatcher.ingest([alert], 30)
    dispatcher.tick(70)
    assert len(sent("chat")) == 1                   # muted
    silences.expire(silence.id, 100)
    assert silences.get(silence.id).state(100) == "expired"
    dispatcher.ingest([alert], 120)
    dispatcher.tick(130)
    assert len(sent("chat")) == 2                   # still firing after the silence: told again


def test_silence_validation(world):
    _, silences, _, _, _ = world
    with pytest.raises(PermanentError, match="author"):
        silences.add(['a="b"'], 0, 10, "", "", 0)
    with pytest.raises(PermanentError, match="every alert"):
        silences.add(['a=~".*"'], 0, 10, "x", "y", 0)
    with pytest.raises(PermanentError, match="end after"):
        silences.add(['a="b"'], 10, 5, "x", "y", 0)
    with pytest.raises(PermanentError, match="bad matcher"):
        silences.add(["a b"], 0, 10, "x", "y", 0)


def test_p0_inhibits_p1_with_equal_labels(world):
    dispatcher, _, firing, sent, _ = world
    p0 = _alert("SLOErrorBudgetBurn", "P0", task_type="chat")
    p1 = _alert("SLOErrorBudgetBurn", "P1", task_type="chat")
    other = _alert("SLOErrorBudgetBurn", "P1", task_type="search")
    firing[:] = [p0.labels, p1.labels, other.labels]
    dispatcher.ingest([p0, p1, other], 0)
    dispatcher.tick(10)
    [chat] = sent("chat")
    import json
    stored = json.loads(dispatcher_outbox_notification(world, chat["id"]))
    fingerprints = {a["labels"]["severity"] + a["labels"]["task_type"] for a in stored["alerts"]}
    assert fingerprints == {"P0chat", "P1search"}   # P1 chat is inhibited by P0 chat


def dispatcher_outbox_notification(world, notification_id):
    store = world[4]
    return store.query("select notification from outbox where id = ?", (notification_id,))[0][0]


def test_provider_outage_inhibits_task_type_alerts():
    rules = parse_inhibit_rules(None, "default")
    outage = {"alertname": "ModelProviderDown", "severity": "P0", "provider": "openai"}
    inhibitor = Inhibitor(rules, lambda: [outage])
    assert inhibitor.mutes({"alertname": "BudgetExhaustionRising", "severity": "P1",
                            "scope": "task_type", "task_type": "chat"}, 0)
    assert inhibitor.mutes({"alertname": "SLOErrorBudgetBurn", "severity": "P0", "task_type": "chat"}, 0)
    assert not inhibitor.mutes({"alertname": "ToolErrorRateHigh", "severity": "P1", "scope": "hop"}, 0)
    assert not inhibitor.mutes(outage, 0)           # never itself


@pytest.mark.parametrize("raw, message", [
    ({"route": {"receiver": "nope"}, "receivers": [{"name": "a"}]}, "route.receiver 'nope' is not defined"),
    ({"route": {"receiver": "a", "group_wait": "soon"}, "receivers": [{"name": "a"}]}, "route.group_wait"),
    ({"route": {"receiver": "a", "routes": [{"matchers": ["x"]}]}, "receivers": [{"name": "a"}]},
     "route.routes[0].matchers[0]"),
    ({"route": {"receiver": "a"}, "receivers": [{"name": "a", "fax_configs": []}]},
     "receivers[0].fax_configs: unknown integration"),
    ({"route": {"receiver": "a"}, "receivers": [{"name": "a", "webhook_configs": [{"url": "x"}]}]},
     "receivers[0].webhook_configs[0].url"),
    ({"route": {"receiver": "a"}, "receivers": [{"name": "a", "webhook_configs": [
        {"url": "http://x", "secret": "nope"}]}]}, "webhook_configs[0].secret"),
    ({"route": {"receiver": "a"}, "receivers": [{"name": "a", "email_configs": [
        {"to": "x@y", "from": "a@b", "smarthost": "nohost"}]}]}, "email_configs[0].smarthost"),
    ({"receivers": [{"name": "a"}]}, "route is required"),
    ({"route": {"receiver": "a"}, "receivers": [{"name": "a"}],
      "inhibit_rules": [{"source_matchers": ['a="b"']}]}, "inhibit_rules[0] needs"),
])
def test_routing_errors_name_the_key(raw, message):
    from agentsla.yamlsrc import SourceError

    with pytest.raises(SourceError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_routing(raw, "cfg")
