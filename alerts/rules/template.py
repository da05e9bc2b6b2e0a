"""Annotation templates: `{{ $value | percent }}`, `{{ $labels.task_type }}` and friends.

A deliberately small language (no logic, no Jinja): a variable, optionally piped through one
filter. Variables: $value, $threshold, $labels.<name>, $first_failing_hop, $example_task_ids,
$example_trace_ids, $dashboard_url, $alertname. Filters: percent, humanize, seconds, join.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

_PLACEHOLDER = re.compile(r"\{\{\s*(\$[A-Za-z_][A-Za-z0-9_.]*)\s*(?:\|\s*([a-z]+)\s*)?\}\}")
VARIABLES = ("$value", "$threshold", "$first_failing_hop", "$example_task_ids",
             "$example_trace_ids", "$dashboard_url", "$alertname")
FILTERS = ("percent", "humanize", "seconds", "join")


def check(text: str) -> str | None:
    """Return a message about the first bad placeholder in a template, or None."""
    for match in _PLACEHOLDER.finditer(text):
        name, filt = match.group(1), match.group(2)
        if name not in VARIABLES and not re.fullmatch(r"\$labels\.[A-Za-z_][A-Za-z0-9_]*", name):
            return f"unknown template variable {name}; known: {', '.join(VARIABLES)}, $labels.<name>"
        if filt and filt not in FILTERS:
            return f"unknown template filter {filt!r}; known: {', '.join(FILTERS)}"
    rest = _PLACEHOLDER.sub("", text)
    if "{{" in rest:
        return "a '{{' does not open a valid placeholder such as {{ $value }}"
    return None


def render(text: str, variables: Mapping[str, Any]) -> str:
    """Fill a template's placeholders; unknown labels render empty."""
    def fill(match: re.Match) -> str:
        name, filt = match.group(1), match.group(2)
        if name.startswith("$labels."):
            value = (variables.get("$labels") or {}).get(name[len("$labels."):], "")
        else:
            value = variables.get(name, "")
        return _apply(value, filt)
    return _PLACEHOLDER.sub(fill, text)


def _apply(value: Any, filt: str | None) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    if filt == "percent" and isinstance(value, (int, float)):
        return f"{value * 100:.3g}%"
    if filt == "seconds" and isinstance(value, (int, float)):
        return f"{value:.3g}s" if value >= 1 else f"{value * 1000:.3g}ms"
    if filt == "humanize" and isinstance(value, (int, float)):
        return humanize(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return "" if value is None else str(value)


def humanize(value: float) -> str:
    """Format a number with three significant digits and a k/M/G suffix."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.3g}"
