"""Findings: the timeout-budget failures agent platforms actually had, found in the spans.

`find_findings(store, start_ns, end_ns, kind, thresholds)` runs one module per finding type; each
asks its questions of the read store (queries.store) over the views `spans` and `tasks`
(aggregated in the database, one row per hop and rule) and shapes the rows into findings. See docs/findings.md.
"""

from __future__ import annotations

from typing import Any, Mapping

from agentsla.contract import FINDING_TYPES
from agentsla.errors import PermanentError
from agentsla.queries.findings import (budget_inversion, context_growth, duplicate_side_effect,
                                       false_failover, ghost_work, missing_timeout,
                                       rate_limit_masking, retry_amplification, runaway_loop,
                                       saturation, stream_stall, wait_amplification)
from agentsla.queries.findings._finding import SEVERITIES
from agentsla.queries.findings.thresholds import (DEFAULT_THRESHOLDS, THRESHOLDS,
                                                  resolve_thresholds)
from agentsla.queries.store import ReadStore

__all__ = ["find_findings", "check_kind", "resolve_thresholds", "DEFAULT_THRESHOLDS", "THRESHOLDS",
           "DETECTORS"]

#: Finding type -> its module (each has TYPE and detect(store, params, thresholds)).
DETECTORS = {m.TYPE: m for m in (
    budget_inversion, missing_timeout, retry_amplification, ghost_work, wait_amplification,
    context_growth, rate_limit_masking, false_failover, runaway_loop, duplicate_side_effect,
    stream_stall, saturation,
)}
assert set(DETECTORS) == set(FINDING_TYPES), "every finding type needs a detector"


def check_kind(kind: str | None) -> str | None:
    """Return a finding type from the contract (or None for all), or raise PermanentError."""
    if kind is None or kind == "":
        return None
    if kind not in FINDING_TYPES:
        raise PermanentError(f"bad kind {kind!r}: expected one of {', '.join(FINDING_TYPES)}")
    return kind


def find_findings(store: ReadStore, start_ns: int, end_ns: int, kind: str | None,
                  thresholds: Mapping[str, Any]) -> list[dict]:
    """List the findings whose evidence ended in [start_ns, end_ns), most severe first.

    `thresholds` is the config file's `findings:` section (overrides); defaults fill the rest
    and unknown keys raise ConfigError. `kind` limits the result to one finding type.
    """
    kind = check_kind(kind)
    merged = resolve_thresholds(thresholds)
    params = {"start_ns": int(start_ns), "end_ns": int(end_ns), **merged}
    found: list[dict] = []
    for type_, module in DETECTORS.items():
        if kind is None or kind == type_:
            found.extend(module.detect(store, params, merged))
    found.sort(key=_rank)
    return found


def _rank(finding: dict) -> tuple:
    hop = finding["hop"] or {}
    return (SEVERITIES.index(finding["severity"]), FINDING_TYPES.index(finding["type"]),
            -(finding["last_seen_ns"] or 0), str(hop.get("kind")), str(hop.get("name")))
