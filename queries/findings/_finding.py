"""Shared pieces of the finding detectors: shaping findings and formatting numbers for hints.

Each question's SQL is queries/sql/<dialect>/findings/<question>.sql; those numbering attempts
share the snippet `attempts`. Every question returns one row per hop (or task type) and rule,
already aggregated by the store, with the columns `hop_kind`, `hop_name` (or `task_type`),
`examples` (a list of up to five {task_id, span_id}), `first_ns`, `last_ns` and its evidence
numbers. Evidence time is the end of the evidence spans: a finding belongs to a window when some
of its evidence ended inside it.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from agentsla.queries.window import rfc3339

SEVERITIES = ("critical", "warning", "info")
_META = ("hop_kind", "hop_name", "task_type", "examples", "first_ns", "last_ns")


def make_finding(type_: str, rule: str, row: Mapping[str, Any], severity: str, hint: str,
                 evidence: Iterable[str] | None = None) -> dict:
    """Shape one aggregated row into a finding dict (evidence = the row's numeric columns)."""
    keys = evidence if evidence is not None else [k for k in row if k not in _META]
    hop = None
    if row.get("hop_kind") is not None or row.get("hop_name") is not None:
        hop = {"kind": row.get("hop_kind"), "name": row.get("hop_name")}
    return {
        "type": type_,
        "rule": rule,
        "severity": severity,
        "hop": hop,
        "task_type": row.get("task_type"),
        "evidence": {k: _round(row.get(k)) for k in keys},
        "examples": [dict(e) for e in (row.get("examples") or [])][:5],
        "hint": hint,
        "first_seen_ns": row["first_ns"],
        "first_seen": rfc3339(row["first_ns"]),
        "last_seen_ns": row["last_ns"],
        "last_seen": rfc3339(row["last_ns"]),
    }


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 3)
    return value


def dur(ms: float | None) -> str:
    """Format milliseconds for a hint: `350 ms`, `4.5 s`, `165 s`, `12.5 min`."""
    if ms is None:
        return "?"
    if abs(ms) < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000.0
    if abs(seconds) < 600:
        return f"{seconds:.1f} s".replace(".0 s", " s")
    return f"{seconds / 60:.1f} min"


def pct(share: float | None) -> str:
    """Format a share as a percentage for a hint."""
    return "?" if share is None else f"{share * 100:.0f} %"


def hop_label(row: Mapping[str, Any]) -> str:
    """Name a hop as `kind name` for a hint."""
    kind, name = row.get("hop_kind"), row.get("hop_name")
    if kind and name and kind != name:
        return f"{kind} {name}"
    return str(name or kind or "?")

