"""Rule files: line-accurate errors, the default pack, generated SLO burn-rate rules."""

from __future__ import annotations

import dataclasses

import pytest

from agentsla.alerts.rules.groups import (BURN_RATE_TIERS, default_rule_groups, parse_rule_text,
                                   scaled_windows, slo_rule_group)
from agentsla.config import SloObjective, load_config

BAD = """\
groups:
  - name: a
    rules:
      - alert: X
        expr: task_succes_rate [5m] < 1
        labels: {severity: P1}
      - alert: Y
        expr: task_success_rate [5m] < 1
        for: soon
        labels: {severity: P5}
      - alert: Z
        expr: |
          task_success_rate [5m]
            < x
        labels: {tier: P1}
        annotations:
          summary: "{{ $valeu }}"
        bogus: 1
"""


def test_every_error_is_reported_with_its_line():
    _, errors = parse_rule_text(BAD, "bad.yaml")
    found = [(e.line, e.detail.split(":")[0]) for e in errors]
    assert found == [(5, "expr"), (9, "for"), (10, "labels.severity (or tier) must be one of P0, P1, P2, got 'P5'"),
                     (18, "unknown rule key 'bogus'"), (14, "expr"), (17, "annotations.summary")]
    assert str(errors[0]).startswith("bad.yaml:5: expr: column 1: unknown metric")


def test_tier_label_becomes_severity():
    groups, errors = parse_rule_text(
        "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: tasks_finished [5m] > 1\n"
        "    labels: {tier: P2}\n", "t.yaml")
    assert errors == [] and groups[0].rules[0].labels == {"tier": "P2", "severity": "P2"}


def test_default_pack_loads_and_covers_the_brief():
    rules = {r.name: r for g in default_rule_groups() for r in g.rules}
    assert {n: r.severity for n, r in rules.items()} == {
        "TaskSuccessBelowObjective": "P0", "ModelProviderDown": "P0", "ToolErrorRateHigh": "P1",
        "QueueWaitHigh": "P1", "BudgetExhaustionRising": "P1", "FallbackRateRising": "P1",
        "TokenQuotaPredicted": "P2", "NoSpansIngested": "P1"}
    assert rules["ToolErrorRateHigh"].for_s == 120 and rules["QueueWaitHigh"].for_s == 60


def test_burn_rate_windows_scale_with_the_period():
    assert scaled_windows(30 * 86400) == list(BURN_RATE_TIERS)
    # a 7-day SLO: every window x 7/30, e.g. 1h -> 14 min, 5m -> 70 s
    assert [(f, round(l), round(s), t) for f, l, s, t in scaled_windows(7 * 86400)] == [
        (14.4, 840, 70, "P0"), (6.0, 5040, 420, "P0"), (3.0, 20160, 1680, "P1"),
        (1.0, 60480, 5040, "P2")]


def test_slo_rules_cover_each_slo_and_exclude_explicit_types_from_the_default():
    config = dataclasses.replace(load_config(environ={}), slos=(
        SloObjective("chat", 0.99, 30 * 86400), SloObjective("*", 0.999, 30 * 86400)))
    rules = slo_rule_group(config).rules
    assert len(rules) == 8
    assert str(rules[0].expr) == ('slo_burn_rate{task_type="chat"} [1h] > 14.4 and '
                                  'slo_burn_rate{task_type="chat"} [5m] > 14.4')
    assert str(rules[7].expr) == ('slo_burn_rate{task_type!~"chat"} by (task_type) [3d] > 1 and '
                                  'slo_burn_rate{task_type!~"chat"} by (task_type) [6h] > 1')
    assert [r.severity for r in rules[:4]] == ["P0", "P0", "P1", "P2"]


@pytest.mark.parametrize("text, line", [
    ("groups: 3\n", 1),
    ("groups:\n  - name: a\n    rules:\n      - record: x\n        expr: y\n", 4),
    ("groups:\n  - name: a\n    rules: []\n  - name: a\n    rules: []\n", 4),
    ("groups:\n  - name: a\n    rules:\n      - alert: A\n        expr: tasks_finished [5m] > 1\n"
     "        labels: {severity: P1}\n        min_tasks: -1\n", 7),
    ("groups: [\n", 2),
])
def test_structural_errors_have_lines(text, line):
    _, errors = parse_rule_text(text, "f.yaml")
    assert errors and errors[0].line == line
