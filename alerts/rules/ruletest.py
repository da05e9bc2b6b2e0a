"""Rule unit tests, shaped like `promtool test rules`: input series, eval times, expected alerts.

    rule_files: [rules.yaml]          # relative to the test file
    evaluation_interval: 1m
    objectives: {chat: 0.99}          # SLO objectives for `objective` thresholds (default 0.999)
    tests:
      - interval: 1m
        input_series:
          - series: 'hop_error_rate{hop_kind="tool", hop_name="search"}'
            values: '0+0.01x10'       # a+bxn: a, a+b, ..., a+n*b (n+1 values); _ is missing
            counts: '50x10'           # optional: the tasks/calls behind each value (min_tasks)
        alert_rule_test:
          - eval_time: 5m
            alertname: ToolErrorRateHigh
            exp_alerts:
              - exp_labels: {severity: P1, hop_kind: tool, hop_name: search}
                exp_annotations: {summary: "..."}

An input series is the metric's value as its query would compute it at each step (the window
in the expression is not re-applied). Firing alerts are compared, as promtool does.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from agentsla import yamlsrc
from agentsla.alerts.rules.evaluator import Evaluator, State
from agentsla.alerts.rules.expr import Selector
from agentsla.alerts.rules.groups import RuleGroup, load_rule_file
from agentsla.alerts.rules.samples import NS, Sample
from agentsla.yamlsrc import SourceError, line_of
from agentsla.config import parse_duration

_TERM = re.compile(r"^(_|-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)(?:([-+]\d+(?:\.\d+)?(?:e[-+]?\d+)?)?x(\d+))?$")


def expand(notation: str) -> list[float | None]:
    """Expand promtool's series notation: `1 2 _ 3`, `0+10x5`, `5-1x3`, `7x2`, `_x3`."""
    out: list[float | None] = []
    for term in str(notation).split():
        match = _TERM.match(term)
        if not match:
            raise ValueError(f"bad series term {term!r}: expected a number, _, or a+bxn")
        start, step, count = match.groups()
        if count is None:
            out.append(None if start == "_" else float(start))
            continue
        if start == "_":
            out.extend([None] * (int(count) + 1))
            continue
        delta = float(step) if step else 0.0
        out.extend(float(start) + delta * i for i in range(int(count) + 1))
    return out


@dataclass
class Series:
    """One input series: labels and values per step."""

    metric: str
    labels: dict[str, str]
    values: list[float | None]
    counts: list[float | None] | None = None


@dataclass
class SeriesSource:
    """A query source answering selectors from input series, step by step."""

    series: list[Series]
    interval_s: float
    objectives: dict[str, float] = field(default_factory=dict)

    def select(self, selector: Selector, at_ns: int) -> list[Sample]:
        """The series' values at `at_ns`, grouped like the real query (by + `=` labels)."""
        index = int(round(at_ns / NS / self.interval_s))
        groups: dict[tuple, Sample] = {}
        for s in self.series:
            if s.metric != selector.metric or index >= len(s.values) or s.values[index] is None:
                continue
            if not all(m.matches(s.labels) for m in selector.matchers):
                continue
            labels = {k: s.labels.get(k, "") for k in selector.by}
            labels.update(selector.equal_labels())
            count = s.counts[index] if s.counts and index < len(s.counts) else None
            key = tuple(sorted(labels.items()))
            if key not in groups or s.values[index] > groups[key].value:
                groups[key] = Sample(labels, s.values[index], None if count is None else int(count))
        return list(groups.values())

    def objective(self, task_type: str | None) -> float:
        """The objective the test file sets (default 0.999)."""
        return self.objectives.get(task_type or "", self.objectives.get("*", 0.999))


@dataclass
class Failure:
    """One failed expectation, with a diff."""

    where: str
    message: str


_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')


def parse_series(text: str, line: int, source: str) -> tuple[str, dict[str, str]]:
    """Parse `metric{label="value", ...}` (no window) into name and labels."""
    match = re.fullmatch(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\{(.*)\})?\s*", str(text))
    if not match:
        raise SourceError(source, line, f"bad series {text!r}: expected metric{{label=\"value\"}}")
    labels, body, pos = {}, match.group(2) or "", 0
    while pos < len(body.rstrip()):
        pair = _LABEL.match(body, pos)
        if not pair:
            raise SourceError(source, line, f"bad series labels {body!r}: expected label=\"value\"")
        labels[pair.group(1)] = re.sub(r"\\(.)", r"\1", pair.group(2))
        pos = pair.end()
    return match.group(1), labels


def run_file(path: str | Path) -> tuple[int, list[Failure]]:
    """Run every test of a rule test file; return (expectations checked, failures)."""
    path = Path(path)
    source = str(path)
    doc = yamlsrc.load(path.read_text(), source)
    if not isinstance(doc, dict) or not isinstance(doc.get("tests"), list):
        raise SourceError(source, 1, "a rule test file needs `rule_files:` and `tests:`")
    groups: list[RuleGroup] = []
    for name in doc.get("rule_files") or []:
        groups.extend(load_rule_file(path.parent / name))
    interval = parse_duration(doc.get("evaluation_interval", "1m"))
    objectives = {str(k): float(v) for k, v in (doc.get("objectives") or {}).items()}
    checked, failures = 0, []
    for i, test in enumerate(doc["tests"]):
        n, fails = _run_test(test, groups, interval, objectives, source, line_of(doc["tests"], i))
        checked += n
        failures += fails
    return checked, failures


def _run_test(test, groups, default_interval, objectives, source, line) -> tuple[int, list[Failure]]:
    step = parse_duration(test.get("interval", default_interval))
    series = []
    for j, item in enumerate(test.get("input_series") or []):
        where = line_of(test["input_series"], j)
        metric, labels = parse_series(item.get("series", ""), where, source)
        try:
            values = expand(item.get("values", ""))
            counts = expand(item["counts"]) if "counts" in item else None
        except ValueError as exc:
            raise SourceError(source, where, str(exc)) from None
        series.append(Series(metric, labels, values, counts))
    cases = sorted(enumerate(test.get("alert_rule_test") or []),
                   key=lambda c: parse_duration(c[1].get("eval_time", 0)))
    evaluator = Evaluator(groups, step)
    query = SeriesSource(series, step, objectives)
    t, failures = 0.0, []
    for index, case in cases:
        until = parse_duration(case.get("eval_time", 0))
        while t <= until + 1e-9:
            evaluator.eval(t, query, force=True)
            t += step
        failures += _compare(case, evaluator, source, line_of(test["alert_rule_test"], index))
    return len(cases), failures


def _compare(case, evaluator, source, line) -> list[Failure]:
    name = case.get("alertname")
    rules = {r.rule.name: r.rule for r in evaluator.rules}
    got = []
    for alert in evaluator.alerts():
        if alert.name == name and alert.state == State.FIRING:
            defined = rules[name].annotations
            got.append({"exp_labels": {k: v for k, v in alert.labels.items() if k != "alertname"},
                        "exp_annotations": {k: v for k, v in alert.annotations.items() if k in defined}})
    expected = [{"exp_labels": {str(k): str(v) for k, v in (e.get("exp_labels") or {}).items()},
                 "exp_annotations": {str(k): str(v) for k, v in (e.get("exp_annotations") or {}).items()}}
                for e in case.get("exp_alerts") or []]
    for e in expected:  # annotations not given are not compared
        for g in got:
            if g["exp_labels"] == e["exp_labels"] and not e["exp_annotations"]:
                g["exp_annotations"] = {}
    key = lambda a: yaml.safe_dump(a, sort_keys=True)  # noqa: E731
    if sorted(map(key, got)) == sorted(map(key, expected)):
        return []
    diff = difflib.unified_diff(_dump(expected), _dump(got), "expected", "got", lineterm="")
    where = f"{source}:{line}: alertname {name} at eval_time {case.get('eval_time')}"
    return [Failure(where, "\n".join(diff))]


def _dump(alerts: list[dict]) -> list[str]:
    text = yaml.safe_dump(sorted(alerts, key=lambda a: yaml.safe_dump(a, sort_keys=True)),
                          sort_keys=True, default_flow_style=False)
    return text.splitlines() if alerts else ["[]"]
