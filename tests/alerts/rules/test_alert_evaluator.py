"""The per-instance state machine, driven with fixed timestamps and a fake query."""

from __future__ import annotations

import pytest
from alertkit import FakeQuery

from agentsla.alerts.rules.evaluator import AlertingRule, Evaluator, State
from agentsla.alerts.rules.expr import parse
from agentsla.alerts.rules.groups import Rule, RuleGroup

SEARCH = {"hop_kind": "tool", "hop_name": "search"}


def _rule(for_s=0.0, keep_s=0.0, min_tasks=0, retention_s=900.0, dashboard=None) -> AlertingRule:
    rule = Rule("ToolErrors", parse('hop_error_rate{hop_kind="tool"} by (hop_name) [2m] > 0.02'),
                for_s, keep_s, min_tasks, {"severity": "P1"},
                {"summary": "{{ $labels.hop_name }} at {{ $value | percent }}; "
                            "hop {{ $first_failing_hop }}"}, "g")
    return AlertingRule(rule, retention_s, dashboard)


def _states(rule: AlertingRule) -> list[str]:
    return [a.state.value for a in rule.alerts.values()]


def test_inactive_pending_firing_resolved_then_dropped():
    rule, q = _rule(for_s=60, retention_s=300), FakeQuery()
    q.set("hop_error_rate", (SEARCH, 0.01, 100))
    rule.eval(0, q)
    assert _states(rule) == []                      # below threshold: inactive
    q.set("hop_error_rate", (SEARCH, 0.05, 100))
    rule.eval(10, q)
    assert _states(rule) == ["pending"]             # holds: pending
    rule.eval(69, q)
    assert _states(rule) == ["pending"]             # 59 s < for
    rule.eval(70, q)
    alert = next(iter(rule.alerts.values()))
    assert alert.state == State.FIRING and alert.fired_at == 70 and alert.active_at == 10
    assert alert.annotations["summary"] == "search at 5%; hop tool search (timeout)"
    assert alert.annotations["example_trace_ids"] == "a" * 32 + ", " + "b" * 32
    q.set("hop_error_rate", (SEARCH, 0.0, 100))
    rule.eval(80, q)
    assert alert.state == State.RESOLVED and alert.resolved_at == 80
    rule.eval(379, q)
    assert _states(rule) == ["resolved"]            # kept for the retention window
    rule.eval(380, q)
    assert _states(rule) == []                      # then dropped


def test_pending_that_stops_holding_goes_back_to_inactive():
    rule, q = _rule(for_s=60), FakeQuery()
    q.set("hop_error_rate", (SEARCH, 0.05, 100))
    rule.eval(0, q)
    q.set("hop_error_rate")
    rule.eval(10, q)
    assert _states(rule) == []


def test_for_zero_fires_on_the_first_evaluation():
    rule, q = _rule(), FakeQuery()
    q.set("hop_error_rate", (SEARCH, 0.05, 100))
    rule.eval(0, q)
    assert _states(rule) == ["firing"]


def test_keep_firing_for_holds_a_flapping_alert():
    rule, q = _rule(keep_s=60), FakeQuery()
    q.set("hop_error_rate", (SEARCH, 0.05, 100))
    rule.eval(0, q)
    q.set("hop_error_rate")
    rule.eval(30, q)
    assert _states(rule) == ["firing"]              # 30 s < keep_firing_for
    q.set("hop_error_rate", (SEARCH, 0.05, 100))
    rule.eval(50, q)                                # holds again: the clock restarts
    q.set("hop_error_rate")
    rule.eval(100, q)
    assert _states(rule) == ["firing"]              # 50 s since last seen
    rule.eval(110, q)
    assert _states(rule) == ["resolved"]            # 60 s since last seen


def test_min_tasks_guard_keeps_quiet_hours_quiet():
    rule, q = _rule(min_tasks=20), FakeQuery()
    q.set("hop_error_rate", (SEARCH, 1.0, 3))       # 3 of 3 calls failed: too few to judge
    rule.eval(0, q)
    assert _states(rule) == []
    q.set("hop_error_rate", (SEARCH, 0.5, 20))
    rule.eval(10, q)
    assert _states(rule) == ["firing"]


def test_refiring_after_resolve_is_a_new_alert():
    rule, q = _rule(for_s=30), FakeQuery()
    q.set("hop_error_rate", (SEARCH, 0.05, 100))
    rule.eval(0, q)
    rule.eval(30, q)
    q.set("hop_error_rate")
    rule.eval(40, q)
    q.set("hop_error_rate", (SEARCH, 0.05, 100))
    rule.eval(50, q)
    alert = next(iter(rule.alerts.values()))
    assert alert.state == State.PENDING and alert.active_at == 50 and alert.resolved_at is None


def test_a_failing_rule_records_health_and_keeps_its_alerts():
    rule, q = _rule(), FakeQuery()
    q.set("hop_error_rate", (SEARCH, 0.05, 100))
    rule.eval(0, q)
    q.fail = RuntimeError("database is locked")
    rule.eval(10, q)
    assert rule.health == "err" and "database is locked" in rule.last_error
    assert _states(rule) == ["firing"]              # no evidence either way: unchanged
    q.fail = None
    rule.eval(20, q)
    assert rule.health == "ok" and rule.last_error is None


def test_one_failing_rule_does_not_stop_the_others():
    bad = Rule("Bad", parse("task_success_rate [5m] < 0.9"), labels={"severity": "P0"})
    good = Rule("Good", parse("spans_ingested [10m] == 0"), labels={"severity": "P1"})

    class Query(FakeQuery):
        def select(self, selector, at_ns):
            if selector.metric == "task_success_rate":
                raise ValueError("boom")
            return super().select(selector, at_ns)

    q = Query()
    q.set("spans_ingested", ({}, 0.0))
    evaluator = Evaluator([RuleGroup("g", (bad, good))])
    alerts = evaluator.eval(0, q)
    assert [a.name for a in alerts] == ["Good"]
    assert [r.health for r in evaluator.rules] == ["err", "ok"]


def test_instances_are_per_label_set_and_carry_rule_labels():
    rule, q = _rule(dashboard="http://dash"), FakeQuery()
    q.set("hop_error_rate", (SEARCH, 0.05, 100), ({**SEARCH, "hop_name": "browse"}, 0.5, 100))
    rule.eval(0, q)
    labels = sorted((a.labels["hop_name"], a.labels["severity"], a.labels["alertname"])
                    for a in rule.alerts.values())
    assert labels == [("browse", "P1", "ToolErrors"), ("search", "P1", "ToolErrors")]
    alert = next(iter(rule.alerts.values()))
    assert alert.generator_url.startswith("http://dash/alerts?alertname=ToolErrors")
    assert alert.annotations["dashboard"] == alert.generator_url


def test_evaluator_respects_group_intervals_and_restores_state():
    rule = Rule("Dead", parse("spans_ingested [10m] == 0"), labels={"severity": "P1"}, for_s=30)
    evaluator = Evaluator([RuleGroup("g", (rule,), interval_s=20)], interval_s=10)
    q = FakeQuery()
    q.set("spans_ingested", ({}, 0.0))
    evaluator.eval(0, q)
    evaluator.eval(10, q)            # not due (interval 20 s): nothing changes
    assert evaluator.alerts()[0].state == State.PENDING
    evaluator.eval(40, q)
    assert evaluator.alerts()[0].state == State.FIRING
    restored = Evaluator([RuleGroup("g", (rule,), interval_s=20)])
    restored.restore(evaluator.snapshot())
    assert [(a.state, a.fired_at) for a in restored.alerts()] == [(State.FIRING, 40)]


@pytest.mark.parametrize("value, fires", [(0.9989, True), (0.999, False)])
def test_objective_threshold_uses_the_series_task_type(value, fires):
    rule = AlertingRule(Rule("Low", parse("task_success_rate by (task_type) [5m] < objective"),
                             labels={"severity": "P0"},
                             annotations={"summary": "{{ $value | percent }} < {{ $threshold | percent }}"}))
    q = FakeQuery(objectives={"chat": 0.999})
    q.set("task_success_rate", ({"task_type": "chat"}, value, 100))
    rule.eval(0, q)
    assert bool(rule.alerts) is fires
    if fires:
        assert next(iter(rule.alerts.values())).annotations["summary"] == "99.9% < 99.9%"
