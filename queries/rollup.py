"""Which part of a window the per-minute rollups answer, and which the raw rows (docs/rollups.md).

Rollups hold whole minutes; a window's ragged edges (a partial first and last minute) come from
`tasks` and `spans`, so every answer is exact for any window. Asking over raw rows only (the
check command, or a filter the rollups have no key for) gives an empty rollup range.
"""

from __future__ import annotations

MINUTE_NS = 60 * 10**9


def _ceil_minute(ns: int) -> int:
    return -(-ns // MINUTE_NS) * MINUTE_NS


def split(start_ns: int, end_ns: int, raw: bool = False) -> dict[str, int]:
    """Return the bounds: $roll_lo..$roll_hi from rollups, the rest of the window from raw rows."""
    lo, hi = _ceil_minute(start_ns), end_ns // MINUTE_NS * MINUTE_NS
    if raw or lo >= hi:
        lo = hi = end_ns  # raw edges [start, end) and [end, end): everything from raw rows
    return {"start_ns": start_ns, "end_ns": end_ns, "roll_lo": lo, "roll_hi": hi}


def split_series(start_ns: int, end_ns: int, step_ns: int, raw: bool = False) -> dict[str, int]:
    """Return the bounds of a series: rollups only when every bucket holds whole minutes."""
    aligned = start_ns % MINUTE_NS == 0 and step_ns % MINUTE_NS == 0
    return split(start_ns, end_ns, raw or not aligned)
