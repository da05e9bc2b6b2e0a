"""Shared read-side helpers: fetching dicts, the group-by whitelist and common filters."""

from __future__ import annotations

import math
from typing import Any, Mapping

from agentsla.errors import PermanentError

#: Columns (of both views) a result may be grouped by; the only identifiers put into SQL text.
DIMENSIONS = ("task_type", "tenant_id", "service_name", "agent")

#: Bound filters on the `tasks` view shared by the task-level questions (and by hops, through
#: the task); their parameters are TASK_FILTER_NAMES, null meaning "any".
TASK_FILTERS = """
      and ($task_type is null or task_type = $task_type)
      and ($tenant_id is null or tenant_id = $tenant_id)
      and ($service_name is null or service_name = $service_name)"""
TASK_FILTER_NAMES = ("task_type", "tenant_id", "service_name")


def fetch_dicts(cur, sql: str, params: Mapping[str, Any] | None = None) -> list[dict]:
    """Run one statement and return its rows as dicts keyed by column name."""
    cur.execute(sql, dict(params or {}))
    names = [d[0] for d in cur.description]
    return [{n: _plain(v) for n, v in zip(names, row)} for row in cur.fetchall()]


def check_dimension(value: str | None) -> str | None:
    """Return a group-by dimension from the whitelist, or raise PermanentError."""
    if value is None or value == "":
        return None
    if value not in DIMENSIONS:
        raise PermanentError(f"bad group_by {value!r}: expected one of {', '.join(DIMENSIONS)}")
    return value


def ratio(part: float | None, whole: float | None) -> float | None:
    """Divide, giving None (not an error) for an empty denominator."""
    if not whole or part is None:
        return None
    return part / whole


def _plain(value: Any) -> Any:
    # NaN and infinities are not JSON; an empty aggregate is reported as null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
