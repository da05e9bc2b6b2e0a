"""Small inline SVG charts for the HTML report: no scripts, no network, every label escaped."""

from __future__ import annotations

from html import escape
from typing import Callable, Sequence

W, H = 720, 220
PAD_L, PAD_R, PAD_T, PAD_B = 56, 16, 28, 34
COLORS = ("#2563eb", "#dc2626", "#d97706", "#059669", "#7c3aed")


def _frame(title: str, body: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" '
            f'height="{H}" role="img" aria-label="{escape(title)}">'
            f'<title>{escape(title)}</title>'
            f'<text x="{PAD_L}" y="18" font-size="13" font-weight="600">{escape(title)}</text>'
            + "".join(body) + "</svg>")


def line_chart(title: str, xs: Sequence[float], series: dict[str, Sequence[float | None]],
               y_label: Callable[[float], str], x_label: Callable[[float], str],
               markers: Sequence[tuple[float, str]] = ()) -> str:
    """Draw lines over a shared x axis (None values leave gaps) with vertical event markers."""
    values = [v for ys in series.values() for v in ys if v is not None]
    if not xs or not values:
        return _frame(title, [f'<text x="{PAD_L}" y="{H / 2}" font-size="12">no data yet</text>'])
    span_xs = list(xs) + [m[0] for m in markers]
    x0, x1 = min(span_xs), max(span_xs)
    y1 = max(values) or 1.0
    sx = _scale(x0, x1, PAD_L, W - PAD_R)
    sy = _scale(0.0, y1, H - PAD_B, PAD_T)
    body = _axes(y1, sy, y_label) + [
        f'<text x="{PAD_L}" y="{H - 8}" font-size="10">{escape(x_label(x0))}</text>',
        f'<text x="{W - PAD_R}" y="{H - 8}" font-size="10" text-anchor="end">'
        f'{escape(x_label(x1))}</text>']
    for at, label in markers:
        x = sx(at)
        body.append(f'<line x1="{x:.1f}" y1="{PAD_T}" x2="{x:.1f}" y2="{H - PAD_B}" '
                    f'stroke="#6b7280" stroke-dasharray="3 3"/>'
                    f'<text x="{x + 2:.1f}" y="{PAD_T + 10}" font-size="9" fill="#374151">'
                    f'{escape(label)}</text>')
    for i, (name, ys) in enumerate(series.items()):
        color = COLORS[i % len(COLORS)]
        body.append(_polyline([(sx(x), sy(y)) for x, y in zip(xs, ys) if y is not None], color))
        body.append(f'<text x="{W - PAD_R - 170}" y="{PAD_T + 14 * i + 12}" font-size="11" '
                    f'fill="{color}">■ {escape(name)}</text>')
    return _frame(title, body)


def bar_chart(title: str, labels: Sequence[str], values: Sequence[float],
              value_label: Callable[[float], str]) -> str:
    """Draw horizontal bars, largest first as given."""
    if not values:
        return _frame(title, [f'<text x="{PAD_L}" y="{H / 2}" font-size="12">no data yet</text>'])
    top = max(values) or 1.0
    row = (H - PAD_T - 10) / max(len(values), 1)
    body = []
    for i, (label, value) in enumerate(zip(labels, values)):
        y = PAD_T + i * row
        width = (W - 260 - PAD_R) * value / top
        body.append(f'<text x="4" y="{y + row * 0.6:.1f}" font-size="11">{escape(label[:34])}</text>'
                    f'<rect x="220" y="{y + 2:.1f}" width="{width:.1f}" height="{row * 0.7:.1f}" '
                    f'fill="{COLORS[0]}"/><text x="{224 + width:.1f}" y="{y + row * 0.6:.1f}" '
                    f'font-size="11">{escape(value_label(value))}</text>')
    return _frame(title, body)


def _scale(d0: float, d1: float, r0: float, r1: float) -> Callable[[float], float]:
    span = (d1 - d0) or 1.0
    return lambda v: r0 + (v - d0) / span * (r1 - r0)


def _axes(y1: float, sy, y_label) -> list[str]:
    out = [f'<line x1="{PAD_L}" y1="{H - PAD_B}" x2="{W - PAD_R}" y2="{H - PAD_B}" stroke="#9ca3af"/>']
    for frac in (0.0, 0.5, 1.0):
        y = sy(y1 * frac)
        out.append(f'<text x="{PAD_L - 4}" y="{y + 3:.1f}" font-size="10" text-anchor="end">'
                   f'{escape(y_label(y1 * frac))}</text>'
                   f'<line x1="{PAD_L}" y1="{y:.1f}" x2="{W - PAD_R}" y2="{y:.1f}" '
                   f'stroke="#e5e7eb"/>')
    return out


def _polyline(points: list[tuple[float, float]], color: str) -> str:
    if not points:
        return ""
    text = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2" fill="{color}"/>' for x, y in points)
    return f'<polyline points="{text}" fill="none" stroke="{color}" stroke-width="2"/>{dots}'
