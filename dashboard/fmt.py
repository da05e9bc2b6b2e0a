"""Format numbers for people: percentages, durations, counts, burn rates and timestamps.

Every function takes what the query API returns (floats, ints, None) and returns a string;
a missing value (None, NaN) is shown as an em dash, never as `None` or `nan`.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone

MISSING = "—"
_DURATION_STEPS = ((60_000.0, "s", 1000.0), (3_600_000.0, "min", 60_000.0),
                   (86_400_000.0, "h", 3_600_000.0), (math.inf, "d", 86_400_000.0))


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def pct(share: float | None, digits: int = 1) -> str:
    """Format a share (0.9876) as a percentage (`98.8%`), never rounding to 0% or 100% falsely.

    A share just under 1 gets extra digits (`99.95%`, not `100.0%`); a tiny non-zero share is
    shown as `<0.1%`, so a failing SLO never looks perfect.
    """
    if _missing(share):
        return MISSING
    value = share * 100.0
    text = f"{value:.{digits}f}"
    extra = digits
    while value != 100.0 and float(text) == 100.0 and extra < digits + 3:
        extra += 1
        text = f"{value:.{extra}f}"
    if 0 < abs(value) < 10 ** -digits:
        return f"<{10 ** -digits:.{digits}f}%" if value > 0 else f">-{10 ** -digits:.{digits}f}%"
    return f"{text}%"


def duration(ms: float | None) -> str:
    """Format milliseconds: `850 ms`, `4.5 s`, `2.5 min`, `1.2 h`, `3.0 d`."""
    if _missing(ms):
        return MISSING
    if abs(ms) < 1000.0:
        return f"{ms:.1f} ms" if 0 < abs(ms) < 10 else f"{ms:.0f} ms"
    for limit, unit, size in _DURATION_STEPS:
        if abs(ms) < limit:
            return f"{ms / size:.1f} {unit}"
    raise AssertionError("unreachable")  # the last step's limit is infinite


def count(n: float | None) -> str:
    """Format a count with thousands separators: `12,345`."""
    if _missing(n):
        return MISSING
    if isinstance(n, float) and not n.is_integer():
        return f"{n:,.1f}"
    return f"{int(n):,}"


def compact(n: float | None) -> str:
    """Format a large number briefly: `950`, `12.3k`, `4.5M`, `1.2B`."""
    if _missing(n):
        return MISSING
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= size:
            return f"{n / size:.1f}{suffix}"
    return count(n)


def ratio(value: float | None, digits: int = 2) -> str:
    """Format a multiplier such as attempts per call or a burn rate: `1.35×`."""
    if _missing(value):
        return MISSING
    return f"{value:.{digits}f}×"


def rate_per_min(tasks: float | None, seconds: float | None) -> str:
    """Format a throughput from a count over a span of seconds: `12.5/min`."""
    if _missing(tasks) or _missing(seconds) or not seconds:
        return MISSING
    per_min = tasks * 60.0 / seconds
    return f"{per_min:,.1f}/min" if per_min < 100 else f"{per_min:,.0f}/min"


def timestamp(value: str | int | None) -> str:
    """Format an RFC 3339 string or unix nanoseconds as `2024-05-01 12:00:03 UTC`."""
    if value is None or value == "":
        return MISSING
    if isinstance(value, (int, float)):
        moment = datetime.fromtimestamp(value / 1e9, tz=timezone.utc)
    else:
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return str(value)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def label(value: str | None) -> str:
    """Turn an identifier (`budget_exhausted`) into words (`budget exhausted`); None as a dash."""
    if value is None or value == "":
        return MISSING
    return str(value).replace("_", " ")


def hop(kind: str | None, name: str | None, reason: str | None = None) -> str:
    """Name a hop for people: `model gpt-4o`, or `model gpt-4o · timeout` with a reason."""
    if kind is None and name is None:
        text = "unknown hop"
    elif kind and name and kind != name:
        text = f"{kind} {name}"
    else:
        text = str(name or kind)
    return f"{text} · {label(reason)}" if reason else text
