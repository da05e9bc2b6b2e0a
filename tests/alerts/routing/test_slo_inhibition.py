"""One SLO burn shows once, at its highest tier: the inhibit rules generated for the SLO rules."""

from __future__ import annotations

import pytest

from agentsla.alerts.config import parse_alerts_config
from agentsla.alerts.routing.inhibit import Inhibitor


def _burn(factor: str, tier: str, task_type: str = "chat", slo: str = "*") -> dict:
    return {"alertname": "SLOErrorBudgetBurn", "severity": tier, "burn_factor": factor,
            "slo": slo, "task_type": task_type}


FAST, SLOW_P0, P1, P2 = _burn("14.4", "P0"), _burn("6", "P0"), _burn("3", "P1"), _burn("1", "P2")


@pytest.mark.parametrize("firing, target, muted", [
    ([FAST], SLOW_P0, True),                     # the 1h P0 mutes the 6h P0
    ([FAST], P1, True),                          # P0 mutes P1
    ([FAST], P2, True),                          # ... and P2
    ([P1], P2, True),                            # P1 mutes P2
    ([P2], P1, False),                           # never upward
    ([P1], FAST, False),
    ([_burn("14.4", "P0", "search")], P1, False),  # another task type burns on its own
    ([FAST], FAST, False),                       # never itself
])
def test_generated_rules_mute_the_slower_windows(firing, target, muted):
    rules = parse_alerts_config({}).routing.inhibit_rules
    assert Inhibitor(rules, lambda: firing).mutes(target, 0) is muted


def test_slo_inhibit_false_adds_none():
    rules = parse_alerts_config({"slo_inhibit": False}).routing.inhibit_rules
    assert not Inhibitor(rules, lambda: [P1]).mutes(P2, 0)  # the default rules cover P0 only


def test_user_inhibit_rules_keep_the_generated_ones():
    raw = {"route": {"receiver": "a"}, "receivers": [{"name": "a"}],
           "inhibit_rules": [{"source_matchers": ['alertname="X"'], "target_matchers": ['a="b"']}]}
    rules = parse_alerts_config(raw).routing.inhibit_rules
    assert Inhibitor(rules, lambda: [FAST]).mutes(P2, 0)
