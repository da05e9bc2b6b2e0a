"""The `agentsla-budget` header: encode and decode the remaining budget, task id and type.

Wire format (docs/budget-sdk.md):
`remaining-ms=<int>;task-id=<pct>;task-type=<pct>[;sent-ms=<int>]`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from urllib.parse import quote, unquote

HEADER = "agentsla-budget"
_MAX_MS = 10**10  # ~115 days: anything longer is not a request budget


@dataclass(frozen=True)
class WireBudget:
    """What one header carries."""

    remaining_ms: int
    task_id: str | None = None
    task_type: str | None = None
    sent_ms: int | None = None  # message headers only: the producer's unix time in ms


def encode(value: WireBudget) -> str:
    """Return the header value for value."""
    parts = [f"remaining-ms={max(0, value.remaining_ms)}"]
    for key, item in (("task-id", value.task_id), ("task-type", value.task_type)):
        if item:
            parts.append(f"{key}={quote(item, safe='')}")
    if value.sent_ms is not None:
        parts.append(f"sent-ms={value.sent_ms}")
    return ";".join(parts)


def _integer(text: str | None) -> int | None:
    # Digits only (no sign, no fraction); 15 digits hold any unix time in ms.
    return int(text) if text is not None and text.isdigit() and len(text) <= 15 else None


def _text(fields: dict[str, str], key: str) -> str | None:
    return unquote(fields[key]) or None if key in fields else None


def decode(header: str) -> WireBudget | None:
    """Return what header carries, or None when it has no valid remaining-ms."""
    fields: dict[str, str] = {}
    for part in header.split(";"):
        key, sep, val = part.strip().partition("=")
        if sep and key.strip().lower() not in fields:
            fields[key.strip().lower()] = val.strip()
    remaining = _integer(fields.get("remaining-ms"))
    if remaining is None or remaining > _MAX_MS:
        return None
    return WireBudget(remaining_ms=remaining, task_id=_text(fields, "task-id"),
                      task_type=_text(fields, "task-type"), sent_ms=_integer(fields.get("sent-ms")))


def remaining_to_send(remaining_ms: float) -> int:
    """Return the whole milliseconds to put on the wire (rounded down: never promise more)."""
    return max(0, math.floor(remaining_ms)) if math.isfinite(remaining_ms) else _MAX_MS
