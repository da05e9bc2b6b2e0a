"""Which part of a window the rollups answer, and which the raw rows (docs/rollups.md).

Rollups hold whole minutes and, in their hour tier, whole hours; a window's ragged edges (a
partial first and last minute) come from `tasks` and `spans`, so every answer is exact for any
window. Asking over raw rows only (the
check command, or a filter the rollups have no key for) gives an empty rollup range.
"""

from __future__ import annotations

MINUTE_NS = 60 * 10**9
HOUR_NS = 60 * MINUTE_NS


def _whole(start_ns: int, end_ns: int, unit: int) -> tuple[int, int] | None:
    lo, hi = -(-start_ns // unit) * unit, end_ns // unit * unit
    return (lo, hi) if lo < hi else None


def split(start_ns: int, end_ns: int, raw: bool = False, hours: bool = True) -> dict[str, int]:
    """Return the bounds: whole hours $hr_lo..$hr_hi from the hour tier, whole minutes
    $roll_lo..$roll_hi around them from the minutes, the rest of the window from raw rows."""
    minutes = None if raw else _whole(start_ns, end_ns, MINUTE_NS)
    # empty ranges: raw edges [start, end) and [end, end) hold the whole window
    lo, hi = minutes or (end_ns, end_ns)
    whole_hours = _whole(lo, hi, HOUR_NS) if hours else None
    hr_lo, hr_hi = whole_hours or (lo, lo)
    return {"start_ns": start_ns, "end_ns": end_ns, "roll_lo": lo, "roll_hi": hi,
            "hr_lo": hr_lo, "hr_hi": hr_hi}


def split_series(start_ns: int, end_ns: int, step_ns: int, raw: bool = False) -> dict[str, int]:
    """Return the bounds of a series: each tier only where every bucket holds its whole units."""
    minutes = start_ns % MINUTE_NS == 0 and step_ns % MINUTE_NS == 0
    hours = start_ns % HOUR_NS == 0 and step_ns % HOUR_NS == 0
    return split(start_ns, end_ns, raw or not minutes, hours)
