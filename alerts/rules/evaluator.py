"""Evaluate alerting rules: the per-instance state machine, shaped like Prometheus rules/alerting.go.

States: inactive → pending (the condition holds) → firing (it held for `for`) → resolved (it
stopped holding, and `keep_firing_for` passed) → dropped after the resolved retention. Every
transition happens in `AlertingRule.eval(now, query)`, which receives the time and the query
source, so tests drive it with fixed timestamps. A failing rule records `health`/`last_error`
and keeps its alerts; the other rules carry on.
"""

from __future__ import annotations

import enum
import hashlib
import json
import logging
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable
from urllib.parse import urlencode

from agentsla.alerts.rules import template
from agentsla.alerts.rules.groups import Rule, RuleGroup
from agentsla.alerts.rules.samples import NS, Sample, evaluate
from agentsla.contract import FailingHop, hop_label

log = logging.getLogger("agentsla.alerts.rules.evaluator")
DEFAULT_RESOLVED_RETENTION_S = 15 * 60.0


class State(str, enum.Enum):
    """Where an alert instance is in its life."""

    INACTIVE = "inactive"
    PENDING = "pending"
    FIRING = "firing"
    RESOLVED = "resolved"


def fingerprint(labels: dict[str, str]) -> str:
    """Identify an alert instance by its sorted labels (16 hex digits)."""
    text = json.dumps(sorted(labels.items()), separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Alert:
    """One alert instance: a rule's labels plus one series' labels, and where it stands."""

    labels: dict[str, str]
    annotations: dict[str, str]
    state: State
    value: float
    active_at: float
    fired_at: float | None = None
    resolved_at: float | None = None
    last_seen_at: float = 0.0
    generator_url: str = ""
    count: int | None = None
    context: dict[str, Any] = field(default_factory=dict)

    @property
    def fingerprint(self) -> str:
        """The instance's identity."""
        return fingerprint(self.labels)

    @property
    def name(self) -> str:
        """The alert name (its rule)."""
        return self.labels.get("alertname", "")

    def to_json(self) -> dict:
        """Serialize for the store and the API."""
        data = asdict(self)
        data["state"] = self.state.value
        data["fingerprint"] = self.fingerprint
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Alert":
        """Rebuild from to_json()."""
        data = {k: v for k, v in data.items() if k != "fingerprint"}
        data["state"] = State(data["state"])
        return cls(**data)


@dataclass
class AlertingRule:
    """A rule with its alert instances and health."""

    rule: Rule
    resolved_retention_s: float = DEFAULT_RESOLVED_RETENTION_S
    dashboard_url: str | None = None
    alerts: dict[str, Alert] = field(default_factory=dict)
    health: str = "unknown"
    last_error: str | None = None
    last_evaluation: float | None = None
    evaluation_duration_s: float = 0.0

    @property
    def key(self) -> str:
        """Stable identity of the rule across restarts."""
        return f"{self.rule.group}/{self.rule.name}/{self.rule.expr}"

    def eval(self, now: float, query) -> list[Alert]:
        """Evaluate at `now` (unix seconds) against `query`; return the instances it holds."""
        started = time.perf_counter()
        self.last_evaluation = now
        try:
            samples = evaluate(self.rule.expr, query, int(now * NS))
        except Exception as exc:  # a bad rule or a failed query must not stop the others
            self.health, self.last_error = "err", f"{type(exc).__name__}: {exc}"
            log.warning("rule %s failed: %s", self.rule.name, self.last_error)
            return list(self.alerts.values())
        finally:
            self.evaluation_duration_s = time.perf_counter() - started
        self.health, self.last_error = "ok", None
        seen = set()
        for sample in samples:
            if self.rule.min_tasks and sample.count is not None and sample.count < self.rule.min_tasks:
                continue  # too few tasks to judge: quiet hours do not page
            seen.add(self._observe(sample, now, query))
        for fp, alert in list(self.alerts.items()):
            if fp not in seen:
                self._unseen(fp, alert, now)
        return list(self.alerts.values())

    def _observe(self, sample: Sample, now: float, query) -> str:
        labels = {**sample.labels, **self.rule.labels, "alertname": self.rule.name}
        fp = fingerprint(labels)
        alert = self.alerts.get(fp)
        if alert is None or alert.state == State.RESOLVED:
            alert = Alert(labels, {}, State.PENDING, sample.value, active_at=now,
                          generator_url=self._generator_url(labels))
            self.alerts[fp] = alert
        alert.value, alert.count, alert.last_seen_at = sample.value, sample.count, now
        if alert.state == State.PENDING and now - alert.active_at >= self.rule.for_s:
            alert.state, alert.fired_at = State.FIRING, now
        alert.context = _context(query, labels, self.rule.expr.selector.window_s, now)
        alert.annotations = self._annotations(alert)
        return fp

    def _unseen(self, fp: str, alert: Alert, now: float) -> None:
        if alert.state == State.PENDING:
            del self.alerts[fp]  # back to inactive: pending alerts are never sent
        elif alert.state == State.FIRING:
            if now - alert.last_seen_at < self.rule.keep_firing_for_s:
                return
            alert.state, alert.resolved_at = State.RESOLVED, now
        elif alert.state == State.RESOLVED and now - (alert.resolved_at or now) >= self.resolved_retention_s:
            del self.alerts[fp]

    def _annotations(self, alert: Alert) -> dict[str, str]:
        condition = self.rule.expr.conditions[0]
        threshold: Any = condition.threshold
        if threshold == "objective":
            threshold = alert.context.get("objective", "")
        variables = {"$value": alert.value, "$labels": alert.labels, "$threshold": threshold,
                     "$alertname": self.rule.name, "$dashboard_url": self.dashboard_url or "",
                     "$first_failing_hop": hop_label(FailingHop.from_json(
                         alert.context.get("first_failing_hop"))),
                     "$example_task_ids": alert.context.get("example_task_ids", []),
                     "$example_trace_ids": alert.context.get("example_trace_ids", [])}
        out = {k: template.render(v, variables) for k, v in self.rule.annotations.items()}
        # Every notification carries the first failing hop and example traces: as text here,
        # for Alertmanager and people; structured in the alert's context for everything else.
        out.setdefault("first_failing_hop", str(variables["$first_failing_hop"]))
        out.setdefault("example_trace_ids", ", ".join(variables["$example_trace_ids"]))
        out.setdefault("example_task_ids", ", ".join(variables["$example_task_ids"]))
        if self.dashboard_url:
            out.setdefault("dashboard", alert.generator_url)
        return out

    def _generator_url(self, labels: dict[str, str]) -> str:
        if not self.dashboard_url:
            return ""
        scope = {k: v for k, v in labels.items() if k in ("alertname", "task_type", "tenant_id")}
        return self.dashboard_url.rstrip("/") + "/alerts?" + urlencode(scope)

    def describe(self) -> dict:
        """Describe the rule and its health for the API."""
        return {"name": self.rule.name, "group": self.rule.group, "expr": str(self.rule.expr),
                "for_s": self.rule.for_s, "keep_firing_for_s": self.rule.keep_firing_for_s,
                "min_tasks": self.rule.min_tasks, "labels": self.rule.labels,
                "health": self.health, "last_error": self.last_error,
                "last_evaluation": self.last_evaluation,
                "evaluation_duration_s": self.evaluation_duration_s}


def _context(query, labels: dict[str, str], window_s: float, now: float) -> dict:
    context = {}
    if hasattr(query, "objective"):
        context["objective"] = query.objective(labels.get("task_type") or None)
    describe = getattr(query, "context", None)
    if describe is not None:
        try:
            context.update(describe(labels, window_s, int(now * NS)))
        except Exception as exc:  # context is a courtesy: the alert still fires without it
            log.warning("root-cause context for %s failed: %s", labels.get("alertname"), exc)
    return context


class Evaluator:
    """All rule groups: evaluates each at its interval and keeps the alert instances."""

    def __init__(self, groups: Iterable[RuleGroup], interval_s: float = 10.0,
                 resolved_retention_s: float = DEFAULT_RESOLVED_RETENTION_S,
                 dashboard_url: str | None = None) -> None:
        self.interval_s = interval_s
        self.groups = [(g, [AlertingRule(r, resolved_retention_s, dashboard_url) for r in g.rules])
                       for g in groups]
        self._next_due: dict[str, float] = {}

    @property
    def rules(self) -> list[AlertingRule]:
        """Every rule, in file order."""
        return [rule for _, rules in self.groups for rule in rules]

    def eval(self, now: float, query, force: bool = False) -> list[Alert]:
        """Evaluate the groups that are due at `now` (all when `force`); return every alert."""
        for group, rules in self.groups:
            due = self._next_due.get(group.name, 0.0)
            if force or now >= due:
                for rule in rules:
                    rule.eval(now, query)
                self._next_due[group.name] = now + (group.interval_s or self.interval_s)
        return self.alerts()

    def alerts(self) -> list[Alert]:
        """Every pending, firing and retained resolved alert."""
        return [a for rule in self.rules for a in rule.alerts.values()]

    def copies(self) -> list[Alert]:
        """Copy every alert, so readers on other threads never see one that the next round changes."""
        return [Alert.from_json(a.to_json()) for a in self.alerts()]

    def snapshot(self) -> dict[str, list[dict]]:
        """State to persist: each rule's alerts, keyed by the rule's key."""
        return {rule.key: [a.to_json() for a in rule.alerts.values()] for rule in self.rules}

    def restore(self, snapshot: dict[str, list[dict]]) -> None:
        """Load persisted alerts back into rules that still exist."""
        for rule in self.rules:
            for data in snapshot.get(rule.key, []):
                alert = Alert.from_json(data)
                rule.alerts[alert.fingerprint] = alert
