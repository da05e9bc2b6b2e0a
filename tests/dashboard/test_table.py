"""render.table: small tables drawn by st.table, whose cells are Markdown, show text as written."""

from __future__ import annotations

import html

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from agentsla.dashboard import render

#: CommonMark with GitHub's tables and strikethrough, as Streamlit's Markdown reads them.
MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])


@pytest.mark.parametrize("text", [
    "*a* _b_ `c` [link](http://x) <http://y> ~~gone~~ a|b !x &amp; back\\slash",
    "1. retry", "2) retry", "- item", "+ item", "* item", "# heading", "> quote",
    "first line\n- second line", "hop_timeout_ms", "98.8%", "2026-12-05 18:00:00", "-5",
])
def test_a_cell_reads_as_its_text(text: str) -> None:
    assert MARKDOWN.render(render.literal(text)) == f"<p>{html.escape(text, quote=False)}</p>\n"


def test_streamlits_own_markdown_is_escaped_too() -> None:
    assert render.literal("$x$ :red[y]") == "\\$x\\$ :red\\[y\\]"  # LaTeX, colour directive
    assert render.literal(42) == 42


def test_rows_reach_st_table_escaped(tmp_path) -> None:
    app = tmp_path / "app.py"
    app.write_text("from agentsla.dashboard import render\n"
                   "render.table([{'hop': 'crm_lookup', 'calls': 3}])\n")
    at = AppTest.from_file(str(app), default_timeout=30).run()
    [table] = at.table
    assert table.value.to_dict("records") == [{"hop": "crm\\_lookup", "calls": 3}]
