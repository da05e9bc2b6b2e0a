"""Export an incident document: JSON, CSV (timeline rows), Markdown post-mortem, HTML report.

`render(doc, fmt)` returns the text, its media type and a file name; each format is one module.
Every string that came from spans or people is escaped by the format that writes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentsla.errors import PermanentError

FORMATS = ("json", "csv", "md", "html")
_MEDIA = {"json": "application/json", "csv": "text/csv; charset=utf-8",
          "md": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8"}


@dataclass(frozen=True)
class Rendered:
    """An export: its text, media type and suggested file name."""

    text: str
    media_type: str
    filename: str


def render(doc: dict, fmt: str) -> Rendered:
    """Render an incident document in one of FORMATS (PermanentError for another)."""
    if fmt not in FORMATS:
        raise PermanentError(f"bad format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if fmt == "json":
        from agentsla.alerts.incidents.export.json_format import to_json as fn
    elif fmt == "csv":
        from agentsla.alerts.incidents.export.csv_format import to_csv as fn
    elif fmt == "md":
        from agentsla.alerts.incidents.export.markdown import to_markdown as fn
    else:
        from agentsla.alerts.incidents.export.html_report import to_html as fn
    safe_id = re.sub(r"[^A-Za-z0-9._-]", "_", str(doc["incident"]["id"]))
    return Rendered(fn(doc), _MEDIA[fmt], f"{safe_id}-timeline.{fmt}")
