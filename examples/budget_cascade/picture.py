"""Draw the two runs' budget use as an SVG: each task's spans against its 3 s budget."""

from __future__ import annotations

from chain import Run
from figures import spans_of

WIDTH, LEFT, ROW, TOP = 920, 150, 22, 46
COLORS = {"gateway": "#9aa5b1", "queue": "#d9c27a", "agent": "#7fa7d9"}
LAYERS = {"gateway": 0, "queue": 1, "agent": 2, "model": 3}  # drawn bottom to top


def _color(span: dict) -> str:
    if span["hop_kind"] == "model":
        return "#d9534f" if span["error_type"] else "#5cb85c"
    return COLORS.get(span["hop_kind"], "#cccccc")


def _bars(spans: list[dict], y: float, scale: float) -> list[str]:
    root = min(spans, key=lambda span: span["start_ns"])
    bars = []
    for span in sorted(spans, key=lambda span: LAYERS.get(span["hop_kind"], 0)):
        x = LEFT + (span["start_ns"] - root["start_ns"]) / 1e9 * scale
        width = max(1.5, span["duration_ms"] / 1000 * scale)
        height = 14 if span["hop_kind"] in ("gateway", "model") else 8
        bars.append(f'<rect x="{x:.1f}" y="{y + (14 - height) / 2:.1f}" width="{width:.1f}" '
                    f'height="{height}" fill="{_color(span)}" fill-opacity="0.85"/>')
    return bars


Panel = tuple[str, list[tuple[str, list[dict]]]]  # mode, [(row label, spans)]


def collect(api: str, run: Run) -> Panel:
    """Return what the picture needs of run, read from agentsla while it is up."""
    return run.mode, [(f"{call.kind} → {call.status}", spans_of(api, call.task_id))
                      for call in run.calls]


def _panel(panel: Panel, top: float, scale: float, budget_s: float) -> list[str]:
    mode, rows = panel
    title = {"before": "without agentsla-budget", "after": "with agentsla-budget"}[mode]
    parts = [f'<text x="8" y="{top - 8}" font-weight="bold">{title}</text>']
    for row, (label, spans) in enumerate(rows):
        y = top + row * ROW
        parts.append(f'<text x="8" y="{y + 11}">{label}</text>')
        parts += _bars(spans, y, scale)
    x = LEFT + budget_s * scale
    parts.append(f'<line x1="{x}" y1="{top - 4}" x2="{x}" y2="{top + len(rows) * ROW}" '
                 f'stroke="#c00" stroke-dasharray="4 3"/>')
    return parts


def svg(panels: list[Panel], budget_s: float = 3.0, span_s: float = 15.0) -> str:
    """Return the SVG of the runs' panels, one above the other, on one time scale."""
    scale = (WIDTH - LEFT - 20) / span_s
    parts, top = [], TOP
    for panel in panels:
        parts += _panel(panel, top, scale, budget_s)
        top += len(panel[1]) * ROW + TOP
    ticks = [f'<text x="{LEFT + s * scale:.0f}" y="{top - 20}" text-anchor="middle">{s} s</text>'
             for s in range(0, int(span_s) + 1, 3)]
    legend = ('<text x="8" y="{0}">gateway (grey), queue wait (yellow), worker (blue), model '
              'attempt ok (green) / timed out (red); red dashes: the 3 s budget</text>'
              ).format(top + 2)
    height = top + 14
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'font-family="sans-serif" font-size="12"><rect width="100%" height="100%" '
            f'fill="white"/>{"".join(parts + ticks)}{legend}</svg>\n')
