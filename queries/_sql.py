"""Shared read-side vocabulary: the group-by whitelist and the task-level filters."""

from __future__ import annotations

from agentsla.errors import PermanentError

#: Columns (of both views) a result may be grouped by; the only identifiers put into SQL text.
DIMENSIONS = ("task_type", "tenant_id", "service_name", "agent")

#: Bound filters on the `tasks` view shared by the task-level questions (and by hops, through
#: the task): the parameters of each engine's snippet `task_filters`, null meaning "any".
TASK_FILTER_NAMES = ("task_type", "tenant_id", "service_name")


def task_filters(task_type: str | None = None, tenant_id: str | None = None,
                 service_name: str | None = None) -> dict[str, str | None]:
    """Return the parameters of the snippet `task_filters`."""
    return {"task_type": task_type, "tenant_id": tenant_id, "service_name": service_name}


def check_dimension(value: str | None) -> str | None:
    """Return a group-by dimension from the whitelist, or raise PermanentError."""
    if value is None or value == "":
        return None
    if value not in DIMENSIONS:
        raise PermanentError(f"bad group_by {value!r}: expected one of {', '.join(DIMENSIONS)}")
    return value
