"""Alerting rules: load Prometheus-shaped rule files, the default pack and SLO burn-rate rules.

A rule file holds `groups:`, each with `name`, optional `interval` and `rules:`; a rule has
`alert`, `expr`, `for`, `keep_firing_for`, `min_tasks`, `labels` (with `severity` or `tier`
P0/P1/P2) and `annotations`. Errors are `file:line: message`, collected so `agentsla alerts
check` reports them all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from agentsla import yamlsrc
from agentsla.alerts.rules import template
from agentsla.alerts.rules.expr import Expr, ExprError, parse
from agentsla.yamlsrc import SourceDict, SourceError, line_of
from agentsla.config import Config, SloObjective, parse_duration

TIERS = ("P0", "P1", "P2")
_RULE_KEYS = {"alert", "expr", "for", "keep_firing_for", "min_tasks", "labels", "annotations"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DEFAULT_PACK = "default_rules.yaml"

#: (burn factor, long window, short window, tier) for a 30-day SLO period (Google SRE workbook).
BURN_RATE_TIERS: tuple[tuple[float, float, float, str], ...] = (
    (14.4, 3600.0, 300.0, "P0"),
    (6.0, 21600.0, 1800.0, "P0"),
    (3.0, 86400.0, 7200.0, "P1"),
    (1.0, 259200.0, 21600.0, "P2"),
)
_BASE_PERIOD = 30 * 86400.0


@dataclass(frozen=True)
class Rule:
    """One alerting rule, parsed and validated."""

    name: str
    expr: Expr
    for_s: float = 0.0
    keep_firing_for_s: float = 0.0
    min_tasks: int = 0
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    group: str = ""
    source: str = ""
    line: int = 0

    @property
    def severity(self) -> str:
        """The rule's tier, P0 to P2."""
        return self.labels.get("severity", "")


@dataclass(frozen=True)
class RuleGroup:
    """Rules evaluated together at one interval (None: the service's evaluation_interval)."""

    name: str
    rules: tuple[Rule, ...]
    interval_s: float | None = None
    source: str = ""


class _Errors(list):
    def add(self, source: str, line: int, message: str) -> None:
        self.append(SourceError(source, line, message))


def parse_rule_text(text: str, source: str) -> tuple[list[RuleGroup], list[SourceError]]:
    """Parse a rule file's text into groups and every error found (line-accurate)."""
    errors = _Errors()
    try:
        doc = yamlsrc.load(text, source)
    except SourceError as exc:
        return [], [exc]
    if not isinstance(doc, SourceDict) or not isinstance(doc.get("groups"), list):
        errors.add(source, getattr(doc, "line", 1), "a rule file needs a top-level `groups:` list")
        return [], errors
    unknown = set(doc) - {"groups"}
    for key in sorted(unknown):
        errors.add(source, doc.line_of(key), f"unknown key {key!r} (expected groups)")
    groups, names = [], set()
    for i, raw in enumerate(doc["groups"]):
        group = _parse_group(raw, source, line_of(doc["groups"], i), errors)
        if group is None:
            continue
        if group.name in names:
            errors.add(source, line_of(raw, "name"), f"duplicate group name {group.name!r}")
        names.add(group.name)
        groups.append(group)
    return groups, errors


def _parse_group(raw: Any, source: str, line: int, errors: _Errors) -> RuleGroup | None:
    if not isinstance(raw, SourceDict):
        errors.add(source, line, "each group must be a mapping with name and rules")
        return None
    for key in sorted(set(raw) - {"name", "interval", "rules"}):
        errors.add(source, raw.line_of(key), f"unknown group key {key!r}")
    name = str(raw.get("name") or "")
    if not name:
        errors.add(source, raw.line, "group needs a name")
    interval = _duration(raw, "interval", source, errors) if "interval" in raw else None
    rules_raw = raw.get("rules")
    if not isinstance(rules_raw, list):
        errors.add(source, raw.line_of("rules"), f"group {name!r} needs a `rules:` list")
        return None
    rules = [r for i, item in enumerate(rules_raw)
             if (r := _parse_rule(item, name, source, line_of(rules_raw, i), errors))]
    return RuleGroup(name, tuple(rules), interval, source)


def _duration(raw: SourceDict, key: str, source: str, errors: _Errors) -> float:
    try:
        return parse_duration(raw[key])
    except ValueError as exc:
        errors.add(source, raw.line_of(key), f"{key}: {exc}")
        return 0.0


def _parse_rule(raw: Any, group: str, source: str, line: int, errors: _Errors) -> Rule | None:
    if not isinstance(raw, SourceDict):
        errors.add(source, line, "each rule must be a mapping")
        return None
    if "record" in raw:
        errors.add(source, raw.line_of("record"), "recording rules are not supported; use `alert:`")
        return None
    start = len(errors)
    for key in sorted(set(raw) - _RULE_KEYS):
        errors.add(source, raw.line_of(key), f"unknown rule key {key!r}")
    name = str(raw.get("alert") or "")
    if not _NAME.fullmatch(name):
        errors.add(source, raw.line_of("alert"), f"alert name {name!r} must match {_NAME.pattern}")
    expr = _parse_expr(raw, source, errors)
    for_s = _duration(raw, "for", source, errors) if "for" in raw else 0.0
    keep_s = _duration(raw, "keep_firing_for", source, errors) if "keep_firing_for" in raw else 0.0
    min_tasks = raw.get("min_tasks", 0)
    if isinstance(min_tasks, bool) or not isinstance(min_tasks, int) or min_tasks < 0:
        errors.add(source, raw.line_of("min_tasks"), f"min_tasks {min_tasks!r} must be a whole number >= 0")
        min_tasks = 0
    labels = _string_map(raw, "labels", source, errors)
    annotations = _string_map(raw, "annotations", source, errors)
    labels = _tier(labels, raw, source, errors)
    for key, text in annotations.items():
        problem = template.check(text)
        if problem:
            errors.add(source, raw["annotations"].line_of(key), f"annotations.{key}: {problem}")
    if len(errors) > start or expr is None:
        return None
    return Rule(name, expr, for_s, keep_s, min_tasks, labels, annotations, group, source,
                raw.line)


def _parse_expr(raw: SourceDict, source: str, errors: _Errors) -> Expr | None:
    text = raw.get("expr")
    if not isinstance(text, str) or not text.strip():
        errors.add(source, raw.line_of("expr") if "expr" in raw else raw.line, "rule needs an expr")
        return None
    try:
        return parse(text)
    except ExprError as exc:
        line = raw.line_of("expr")
        if "\n" in text.strip():
            # a block scalar (`expr: |`): its text starts on the line after the indicator
            line += 1 + text[:exc.column - 1].count("\n")
        errors.add(source, line, f"expr: {exc}")
        return None


def _string_map(raw: SourceDict, key: str, source: str, errors: _Errors) -> dict[str, str]:
    value = raw.get(key) or {}
    if not isinstance(value, dict):
        errors.add(source, raw.line_of(key), f"{key} must be a mapping of names to strings")
        return {}
    out = {}
    for name, text in value.items():
        if not _NAME.fullmatch(str(name)):
            errors.add(source, line_of(value, name), f"{key}: bad name {name!r}")
        out[str(name)] = "" if text is None else str(text)
    return out


def _tier(labels: dict[str, str], raw: SourceDict, source: str, errors: _Errors) -> dict[str, str]:
    tier = labels.get("severity") or labels.get("tier")
    if tier not in TIERS:
        where = raw["labels"].line_of("severity" if "severity" in labels else "tier") \
            if isinstance(raw.get("labels"), SourceDict) else raw.line
        errors.add(source, where, f"labels.severity (or tier) must be one of {', '.join(TIERS)}, "
                                  f"got {tier!r}")
        return labels
    if labels.get("severity") and labels.get("tier") and labels["severity"] != labels["tier"]:
        errors.add(source, raw["labels"].line_of("tier"), "labels.severity and labels.tier disagree")
    return {**labels, "severity": tier}


def load_rule_file(path: str | Path) -> list[RuleGroup]:
    """Load one rule file, raising SourceError listing every problem."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise SourceError(str(path), 0, f"cannot read rule file: {exc.strerror}") from None
    groups, errors = parse_rule_text(text, str(path))
    if errors:
        raise SourceError(str(path), errors[0].line,
                          "; ".join(e.message for e in errors).replace(f"{path}:", "line "))
    return groups


def default_rule_groups() -> list[RuleGroup]:
    """Load the default rule pack shipped with agentsla (alerts/default_rules.yaml)."""
    text = resources.files("agentsla.alerts.rules").joinpath(DEFAULT_PACK).read_text()
    groups, errors = parse_rule_text(text, DEFAULT_PACK)
    if errors:
        raise errors[0]
    return groups


def scaled_windows(period_s: float) -> list[tuple[float, float, float, str]]:
    """Burn-rate (factor, long, short, tier) windows scaled from 30 days to an SLO period."""
    scale = period_s / _BASE_PERIOD
    return [(factor, long_s * scale, short_s * scale, tier)
            for factor, long_s, short_s, tier in BURN_RATE_TIERS]


def slo_rule_group(config: Config, min_tasks: int = 10) -> RuleGroup:
    """Generate multi-window multi-burn-rate rules for every configured SLO."""
    slos = list(config.slos) or [SloObjective("*")]
    explicit = [s.task_type for s in slos if s.task_type != "*"]
    rules = []
    for slo in slos:
        for factor, long_s, short_s, tier in scaled_windows(slo.period):
            rules.append(_slo_rule(slo, explicit, factor, long_s, short_s, tier, min_tasks))
    return RuleGroup("slo-burn-rate", tuple(rules), None, "generated from slos")


def _slo_rule(slo: SloObjective, explicit: list[str], factor: float, long_s: float,
              short_s: float, tier: str, min_tasks: int) -> Rule:
    if slo.task_type == "*":
        others = "|".join(re.escape(t) for t in explicit)
        scope = ("{task_type!~\"" + others + "\"}" if others else "") + " by (task_type)"
    else:
        scope = f'{{task_type="{slo.task_type}"}}'
    text = " and ".join(f"slo_burn_rate{scope} [{_secs(w)}] > {factor:g}" for w in (long_s, short_s))
    windows = f"{_human(long_s)}/{_human(short_s)}"
    return Rule(
        name="SLOErrorBudgetBurn", expr=parse(text), min_tasks=min_tasks,
        labels={"severity": tier, "slo": slo.task_type, "slo_window": windows,
                "burn_factor": f"{factor:g}"},
        annotations={
            "summary": "{{ $labels.task_type }} tasks burn the error budget "
                       "{{ $value | humanize }}x (over " f"{factor:g}x in {windows})",
            "description": f"SLO objective {slo.objective:.4%} over {_human(slo.period)}: at "
                           f"{factor:g}x burn the budget is gone in "
                           f"{_human(slo.period / factor)}.",
        },
        group="slo-burn-rate", source="generated from slos")


def slo_inhibit_rules() -> list[dict]:
    """Build the inhibit rules that show one SLO burn once, at its fastest firing window.

    Each burn factor mutes the slower ones (so P0 mutes P1 and P2, P1 mutes P2, and the 1h P0
    mutes the 6h P0) of the same SLO and task type, whatever the rules' windows scale to.
    """
    factors = [f"{factor:g}" for factor, *_ in BURN_RATE_TIERS]
    name = 'alertname="SLOErrorBudgetBurn"'
    return [{"source_matchers": [name, f'burn_factor="{fast}"'],
             "target_matchers": [name, f'burn_factor="{slow}"'], "equal": ["slo", "task_type"]}
            for i, fast in enumerate(factors) for slow in factors[i + 1:]]


def _secs(seconds: float) -> str:
    return f"{round(seconds)}s"


def _human(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and abs(seconds / size - round(seconds / size)) < 1e-9:
            return f"{round(seconds / size)}{unit}"
    return f"{seconds:g}s"
