"""The route tree, shaped like Alertmanager's dispatch/route.go.

A route has matchers, a receiver, grouping and timing; children inherit what they do not set.
An alert descends depth-first into the first matching child (or into every matching child
flagged `continue`); when no child matches, the route itself takes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentsla.alerts.rules.expr import Matcher
from agentsla.alerts.routing.matchers import parse_matcher
from agentsla.yamlsrc import SourceError, line_of
from agentsla.config import parse_duration

ROUTE_KEYS = {"receiver", "group_by", "group_wait", "group_interval", "repeat_interval",
              "matchers", "continue", "routes"}
DEFAULTS = {"group_by": ("alertname",), "group_wait": 30.0, "group_interval": 300.0,
            "repeat_interval": 4 * 3600.0}


@dataclass
class Route:
    """One node of the route tree."""

    receiver: str
    group_by: tuple[str, ...]
    group_wait_s: float
    group_interval_s: float
    repeat_interval_s: float
    matchers: tuple[Matcher, ...] = ()
    continue_: bool = False
    routes: list["Route"] = field(default_factory=list)
    key: str = "{}"

    def match(self, labels: dict[str, str]) -> list["Route"]:
        """Return the routes (deepest first matches) that take an alert with these labels."""
        if not all(m.matches(labels) for m in self.matchers):
            return []
        found: list[Route] = []
        for child in self.routes:
            matched = child.match(labels)
            found.extend(matched)
            if matched and not child.continue_:
                break
        return found or [self]

    def group_labels(self, labels: dict[str, str]) -> dict[str, str]:
        """The labels that name the alert's group under this route."""
        if "..." in self.group_by:
            return dict(labels)
        return {k: labels[k] for k in self.group_by if k in labels}

    def walk(self):
        """Yield this route and every descendant."""
        yield self
        for child in self.routes:
            yield from child.walk()


def parse_route(raw: Any, source: str, receivers: set[str], parent: Route | None = None,
                path: str = "route") -> Route:
    """Build a route (and its children) from config, raising SourceError naming the key."""
    if not isinstance(raw, dict):
        raise SourceError(source, getattr(raw, "line", 0), f"{path} must be a mapping")
    for key in raw:
        if key not in ROUTE_KEYS:
            raise SourceError(source, line_of(raw, key), f"{path}.{key}: unknown key; expected "
                                                         f"one of {', '.join(sorted(ROUTE_KEYS))}")
    receiver = raw.get("receiver") or (parent.receiver if parent else None)
    if not receiver:
        raise SourceError(source, line_of(raw, "receiver"), f"{path}.receiver is required at the top")
    if receiver not in receivers:
        raise SourceError(source, line_of(raw, "receiver"),
                          f"{path}.receiver {receiver!r} is not defined in receivers")
    inherited = {k: getattr(parent, f"{k}_s" if k != "group_by" else k) if parent else v
                 for k, v in DEFAULTS.items()}
    values = {}
    for key in ("group_wait", "group_interval", "repeat_interval"):
        try:
            values[key] = parse_duration(raw[key]) if key in raw else inherited[key]
        except ValueError as exc:
            raise SourceError(source, line_of(raw, key), f"{path}.{key}: {exc}") from None
    group_by = raw.get("group_by", inherited["group_by"])
    if not isinstance(group_by, (list, tuple)):
        raise SourceError(source, line_of(raw, "group_by"), f"{path}.group_by must be a list of labels")
    matchers = _matchers(raw, source, path)
    key = (parent.key + "/" if parent else "") + "{" + ",".join(map(str, matchers)) + "}"
    route = Route(receiver, tuple(map(str, group_by)), values["group_wait"],
                  values["group_interval"], values["repeat_interval"], matchers,
                  bool(raw.get("continue", False)), [], key)
    children = raw.get("routes") or []
    if not isinstance(children, list):
        raise SourceError(source, line_of(raw, "routes"), f"{path}.routes must be a list")
    for i, child in enumerate(children):
        sub = parse_route(child, source, receivers, route, f"{path}.routes[{i}]")
        if any(r.key == sub.key for r in route.routes):
            sub.key += f"#{i}"
        route.routes.append(sub)
    return route


def _matchers(raw: dict, source: str, path: str) -> tuple[Matcher, ...]:
    items = raw.get("matchers") or []
    if not isinstance(items, list):
        raise SourceError(source, line_of(raw, "matchers"), f"{path}.matchers must be a list")
    out = []
    for i, text in enumerate(items):
        try:
            out.append(parse_matcher(text))
        except ValueError as exc:
            raise SourceError(source, line_of(items, i), f"{path}.matchers[{i}]: {exc}") from None
    return tuple(out)
