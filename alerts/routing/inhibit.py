"""Inhibition rules, as in Alertmanager's inhibit/inhibit.go.

A firing alert matching `source_matchers` mutes every alert matching `target_matchers` whose
`equal` labels have the same values (a missing label counts as empty). An alert never
inhibits itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from agentsla.alerts.rules.expr import Matcher
from agentsla.alerts.routing.matchers import matches_all, parse_matcher
from agentsla.yamlsrc import SourceError, line_of

#: Used when the config has no `inhibit_rules`: a P0 silences the P1/P2 of the same alert and
#: scope; a provider-wide outage silences the per-task-type alerts it causes.
DEFAULT_INHIBIT_RULES = [
    {"source_matchers": ['severity="P0"'], "target_matchers": ['severity=~"P1|P2"'],
     "equal": ["alertname", "task_type"]},
    {"source_matchers": ['alertname="ModelProviderDown"'],
     "target_matchers": ['scope="task_type"'], "equal": []},
    {"source_matchers": ['alertname="ModelProviderDown"'],
     "target_matchers": ['alertname="SLOErrorBudgetBurn"'], "equal": []},
]


@dataclass(frozen=True)
class InhibitRule:
    """One inhibition rule."""

    source: tuple[Matcher, ...]
    target: tuple[Matcher, ...]
    equal: tuple[str, ...]


class Inhibitor:
    """A Muter: tells whether a firing source alert inhibits an alert."""

    def __init__(self, rules: Iterable[InhibitRule],
                 firing: Callable[[], list[dict[str, str]]]) -> None:
        self.rules = list(rules)
        self.firing = firing

    def mutes(self, labels: dict[str, str], now: float) -> bool:
        """Tell whether any rule inhibits an alert with these labels."""
        candidates = [r for r in self.rules if matches_all(r.target, labels)]
        if not candidates:
            return False
        sources = self.firing()
        for rule in candidates:
            for src in sources:
                if src == labels or not matches_all(rule.source, src):
                    continue
                if all(src.get(k, "") == labels.get(k, "") for k in rule.equal):
                    return True
        return False


def parse_inhibit_rules(raw: Any, source: str) -> list[InhibitRule]:
    """Build inhibition rules from config, raising SourceError naming the key."""
    if raw is None:
        raw = DEFAULT_INHIBIT_RULES
    if not isinstance(raw, list):
        raise SourceError(source, getattr(raw, "line", 0), "inhibit_rules must be a list")
    rules = []
    for i, item in enumerate(raw):
        path = f"inhibit_rules[{i}]"
        if not isinstance(item, dict):
            raise SourceError(source, line_of(raw, i), f"{path} must be a mapping")
        for key in item:
            if key not in ("source_matchers", "target_matchers", "equal"):
                raise SourceError(source, line_of(item, key), f"{path}.{key}: unknown key")
        parts = []
        for key in ("source_matchers", "target_matchers"):
            texts = item.get(key) or []
            try:
                parts.append(tuple(parse_matcher(t) for t in texts))
            except ValueError as exc:
                raise SourceError(source, line_of(item, key), f"{path}.{key}: {exc}") from None
        if not parts[0] or not parts[1]:
            raise SourceError(source, line_of(raw, i),
                              f"{path} needs source_matchers and target_matchers")
        rules.append(InhibitRule(parts[0], parts[1], tuple(item.get("equal") or ())))
    return rules
