"""The `alerts:` section of the config file: rules, routing, receivers, delivery, validated.

Every key is documented in docs/alerts.md ("Configuration"); errors name the key. Routing
(`route`, `receivers`, `inhibit_rules`) may sit inline or in `routing_file`, an
Alertmanager-shaped YAML file checked with line numbers by `agentsla alerts check`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from agentsla import yamlsrc
from agentsla.alerts.incidents.tracker import TIERS, IncidentSettings
from agentsla.alerts.routing.inhibit import InhibitRule, parse_inhibit_rules
from agentsla.alerts.notify.alertmanager import config as am_config
from agentsla.alerts.notify.receivers import ReceiverConfig, parse_receivers
from agentsla.alerts.notify.retry import Retrier
from agentsla.alerts.routing.route import Route, parse_route
from agentsla.alerts.rules.groups import (RuleGroup, default_rule_groups, load_rule_file,
                                          slo_inhibit_rules, slo_rule_group)
from agentsla.yamlsrc import SourceError
from agentsla.config import Config, parse_duration

#: key → (default, meaning); docs/alerts.md documents each (tests/alerts/test_docs.py checks).
KEYS: dict[str, tuple[Any, str]] = {
    "enabled": (True, "evaluate rules and send notifications inside `agentsla serve`"),
    "evaluation_interval": ("10s", "how often rule groups without their own interval run"),
    "resolved_retention": ("15m", "how long resolved alerts stay listed and re-sent to Alertmanager"),
    "history_retention": ("7d", "how long state transitions are kept for /api/v1/alerts history"),
    "default_rules": (True, "load the default rule pack (alerts/default_rules.yaml)"),
    "slo_rules": (True, "generate multi-window burn-rate rules from `slos:`"),
    "slo_min_tasks": (10, "min_tasks of the generated SLO rules"),
    "slo_inhibit": (True, "a firing burn-rate rule mutes the slower ones of the same SLO "
                          "(P0 mutes P1 and P2): one burn shows once, at its highest tier"),
    "rule_files": ([], "rule files to load (relative paths resolve against the working directory)"),
    "routing_file": (None, "a file holding route, receivers and inhibit_rules"),
    "route": (None, "the route tree (Alertmanager shape); default: everything to `default`"),
    "receivers": (None, "receivers with their *_configs integrations"),
    "inhibit_rules": (None, "inhibition rules; default: P0 inhibits P1/P2, provider outage inhibits task-type alerts"),
    "alertmanagers": ([], "Alertmanagers to push every alert to ({url, timeout})"),
    "alertmanager_resend_delay": ("1m", "how often firing alerts are re-sent to Alertmanager"),
    "quotas": ({}, "quotas: {tokens_per_minute: {<model>: <tokens>}} for token_quota_ratio"),
    "delivery": ({}, "{initial_backoff: 1s, max_backoff: 5m, max_age: 24h} for retries"),
    "incidents": ({}, "{enabled: true, severities: [P0, P1], quiet_period: 10m, "
                      "snapshot_interval: 1m, snapshot_window: 5m} (docs/incidents.md)"),
}
ROUTING_KEYS = ("route", "receivers", "inhibit_rules")
DEFAULT_RECEIVER = "default"


@dataclass(frozen=True)
class Routing:
    """The route tree, the receivers it names and the inhibition rules."""

    route: Route
    receivers: dict[str, ReceiverConfig]
    inhibit_rules: list[InhibitRule]


@dataclass(frozen=True)
class AlertsConfig:
    """The validated `alerts:` section."""

    enabled: bool = True
    evaluation_interval_s: float = 10.0
    resolved_retention_s: float = 900.0
    history_retention_s: float = 7 * 86400.0
    default_rules: bool = True
    slo_rules: bool = True
    slo_min_tasks: int = 10
    rule_files: tuple[str, ...] = ()
    routing: Routing | None = None
    alertmanagers: tuple[am_config.AlertmanagerConfig, ...] = ()
    alertmanager_resend_delay_s: float = 60.0
    quotas: Mapping[str, Any] = field(default_factory=dict)
    retrier: Retrier = Retrier()
    max_age_s: float = 86400.0
    incidents: IncidentSettings = IncidentSettings()


def _err(key: str, message: str) -> SourceError:
    return SourceError("config", 0, f"alerts.{key}: {message}")


def _dur(raw: Mapping, key: str, default: Any) -> float:
    try:
        return parse_duration(raw.get(key, default))
    except ValueError as exc:
        raise _err(key, str(exc)) from None


def parse_routing(raw: Mapping, source: str) -> Routing:
    """Validate route, receivers and inhibit_rules (from the config or a routing file)."""
    receivers = parse_receivers(raw.get("receivers"), source)
    route_raw = raw.get("route")
    if route_raw is None:
        if receivers:
            raise SourceError(source, 0, "route is required when receivers are configured")
        receivers = {DEFAULT_RECEIVER: ReceiverConfig(DEFAULT_RECEIVER)}
        route_raw = {"receiver": DEFAULT_RECEIVER}
    route = parse_route(route_raw, source, set(receivers))
    return Routing(route, receivers, parse_inhibit_rules(raw.get("inhibit_rules"), source))


def load_routing_file(path: str | Path) -> Routing:
    """Read and validate a routing file, errors as `file:line: message`."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise SourceError(str(path), 0, f"cannot read routing file: {exc.strerror}") from None
    doc = yamlsrc.load(text, str(path)) or {}
    if not isinstance(doc, dict):
        raise SourceError(str(path), 1, "a routing file is a mapping with route and receivers")
    for key in doc:
        if key not in ROUTING_KEYS:
            raise SourceError(str(path), yamlsrc.line_of(doc, key),
                              f"unknown key {key!r}; expected {', '.join(ROUTING_KEYS)}")
    return parse_routing(doc, str(path))


def parse_alerts_config(raw: Mapping[str, Any] | None, base_dir: Path | None = None) -> AlertsConfig:
    """Validate Config.alerts; relative paths resolve against `base_dir`."""
    raw = dict(raw or {})
    _check_keys_and_flags(raw)
    resolve = (lambda p: str((base_dir / p) if base_dir and not Path(p).is_absolute() else p))
    ams = raw.get("alertmanagers") or []
    if not isinstance(ams, list):
        raise _err("alertmanagers", "must be a list of {url, timeout}")
    delivery = raw.get("delivery") or {}
    if not isinstance(delivery, dict) or set(delivery) - {"initial_backoff", "max_backoff", "max_age"}:
        raise _err("delivery", "expected a mapping with initial_backoff, max_backoff, max_age")
    return AlertsConfig(
        enabled=raw.get("enabled", True),
        evaluation_interval_s=_dur(raw, "evaluation_interval", "10s") or 10.0,
        resolved_retention_s=_dur(raw, "resolved_retention", "15m"),
        history_retention_s=_dur(raw, "history_retention", "7d"),
        default_rules=raw.get("default_rules", True), slo_rules=raw.get("slo_rules", True),
        slo_min_tasks=_slo_min_tasks(raw),
        rule_files=tuple(resolve(str(f)) for f in _rule_files(raw)),
        routing=_routing(raw, resolve),
        alertmanagers=tuple(am_config.parse(a, "config alerts", f"alertmanagers[{i}]")
                            for i, a in enumerate(ams)),
        alertmanager_resend_delay_s=_dur(raw, "alertmanager_resend_delay", "1m"),
        quotas=_quotas(raw),
        retrier=Retrier(_dur(delivery, "initial_backoff", "1s"), _dur(delivery, "max_backoff", "5m")),
        max_age_s=_dur(delivery, "max_age", "24h"),
        incidents=parse_incident_settings(raw.get("incidents")))


def _check_keys_and_flags(raw: Mapping[str, Any]) -> None:
    for key in raw:
        if key not in KEYS:
            raise _err(key, f"unknown key; expected one of {', '.join(sorted(KEYS))}")
    for key in ("enabled", "default_rules", "slo_rules", "slo_inhibit"):
        if not isinstance(raw.get(key, True), bool):
            raise _err(key, f"{raw[key]!r} must be true or false")


def _rule_files(raw: Mapping[str, Any]) -> list:
    files = raw.get("rule_files") or []
    if isinstance(files, str):
        files = [files]
    if not isinstance(files, list):
        raise _err("rule_files", "must be a list of paths")
    return files


def _routing(raw: Mapping[str, Any], resolve: Callable[[str], str]) -> Routing:
    """The routing tree and receivers: a routing_file or inline keys, plus the SLO inhibitions."""
    if raw.get("routing_file"):
        if any(k in raw for k in ROUTING_KEYS):
            raise _err("routing_file", "give routing_file or inline route/receivers, not both")
        routing = load_routing_file(resolve(str(raw["routing_file"])))
    else:
        routing = parse_routing({k: raw.get(k) for k in ROUTING_KEYS}, "config alerts")
    if raw.get("slo_rules", True) and raw.get("slo_inhibit", True):
        # The generated rules bring their inhibitions, beside the default or the user's rules.
        routing = replace(routing, inhibit_rules=routing.inhibit_rules + parse_inhibit_rules(
            slo_inhibit_rules(), "generated from slos"))
    return routing


def _slo_min_tasks(raw: Mapping[str, Any]) -> int:
    min_tasks = raw.get("slo_min_tasks", 10)
    if isinstance(min_tasks, bool) or not isinstance(min_tasks, int) or min_tasks < 0:
        raise _err("slo_min_tasks", f"{min_tasks!r} must be a whole number >= 0")
    return min_tasks


def _quotas(raw: Mapping[str, Any]) -> dict:
    quotas = raw.get("quotas") or {}
    if not isinstance(quotas, dict) or set(quotas) - {"tokens_per_minute"} or not all(
            isinstance(v, (int, float)) and v > 0 for v in (quotas.get("tokens_per_minute") or {}).values()):
        raise _err("quotas", "expected {tokens_per_minute: {<model>: <positive number>}}")
    return quotas


def parse_incident_settings(raw: Any) -> IncidentSettings:
    """Validate `alerts.incidents`: enabled, severities, quiet_period, snapshot pace."""
    raw = raw or {}
    keys = ("enabled", "severities", "quiet_period", "snapshot_interval", "snapshot_window")
    if not isinstance(raw, dict) or set(raw) - set(keys):
        raise _err("incidents", f"expected a mapping with {', '.join(keys)}")
    severities = raw.get("severities", ["P0", "P1"])
    if not isinstance(severities, list) or not all(s in TIERS for s in severities):
        raise _err("incidents", f"severities {severities!r} must be a list of {', '.join(TIERS)}")
    if not isinstance(raw.get("enabled", True), bool):
        raise _err("incidents", f"enabled {raw['enabled']!r} must be true or false")

    def dur(key: str, default: str) -> float:
        try:
            return parse_duration(raw.get(key, default))
        except ValueError as exc:
            raise _err(f"incidents.{key}", str(exc)) from None
    return IncidentSettings(
        enabled=raw.get("enabled", True), severities=tuple(severities),
        quiet_period_s=dur("quiet_period", "10m"),
        snapshot_interval_s=dur("snapshot_interval", "1m"),
        snapshot_window_s=dur("snapshot_window", "5m") or 300.0)


def load_rule_groups(alerts: AlertsConfig, config: Config) -> list[RuleGroup]:
    """Every rule group the service evaluates: default pack, rule files, SLO rules."""
    groups = default_rule_groups() if alerts.default_rules else []
    for path in alerts.rule_files:
        groups.extend(load_rule_file(path))
    if alerts.slo_rules:
        groups.append(slo_rule_group(config, alerts.slo_min_tasks))
    return groups
