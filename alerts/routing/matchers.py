"""Alertmanager-style label matchers in text: `severity="P0"`, `alertname=~"Slo.*"`, `team!=db`."""

from __future__ import annotations

import re

from agentsla.alerts.rules.expr import Matcher

_MATCHER = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*(?:"((?:[^"\\]|\\.)*)"|(\S*))\s*')


def parse_matcher(text: str) -> Matcher:
    """Parse one matcher, or raise ValueError saying what a matcher looks like."""
    match = _MATCHER.fullmatch(str(text))
    if not match:
        raise ValueError(f'bad matcher {text!r}: expected label="value" (or !=, =~, !~)')
    label, op = match.group(1), match.group(2)
    value = match.group(3) if match.group(3) is not None else match.group(4)
    value = re.sub(r"\\(.)", r"\1", value)
    if op in ("=~", "!~"):
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"bad regular expression in matcher {text!r}: {exc}") from None
    return Matcher(label, op, value)


def matches_all(matchers, labels: dict) -> bool:
    """Tell whether every matcher holds for the labels."""
    return all(m.matches(labels) for m in matchers)
