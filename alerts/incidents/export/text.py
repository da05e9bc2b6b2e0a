"""Number formatting shared by the Markdown and HTML exports."""

from __future__ import annotations


def number(value: object) -> str:
    """Format a count or quantity: thousands separators, at most 3 significant decimals."""
    if value is None:
        return "n/a"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{int(value):,}" if isinstance(value, (int, float)) else str(value)


def pct(value: object) -> str:
    """Format a fraction as a percentage, n/a for None."""
    return "n/a" if value is None else f"{float(value):.1%}"


def duration(seconds: object) -> str:
    """Format seconds as 1h 02m, 3m 20s or 12.5s; n/a for None."""
    if seconds is None:
        return "n/a"
    s = float(seconds)
    if s >= 3600:
        return f"{int(s // 3600)}h {int(s % 3600 // 60):02d}m"
    if s >= 60:
        return f"{int(s // 60)}m {int(s % 60):02d}s"
    return f"{s:.1f}s"
