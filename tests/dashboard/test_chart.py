"""render.chart: a figure goes to the chart component as Plotly JSON; without the plotly.js
bundle the chart's place says how to install it. (test_browser.py checks the real drawing.)"""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from agentsla.dashboard import render

SCRIPT = """
import plotly.graph_objects as go
from agentsla.dashboard import render
render.chart(go.Figure(go.Bar(x=["model", "tool"], y=[2, 1]), layout_title="Calls"), "calls")
"""


def _run(tmp_path) -> AppTest:
    app = tmp_path / "app.py"
    app.write_text(SCRIPT)
    return AppTest.from_file(str(app), default_timeout=30).run()


def test_a_figure_reaches_the_component_as_plotly_json(tmp_path) -> None:
    at = _run(tmp_path)
    assert not at.exception and not at.error
    [chart] = at.get("bidi_component")
    args = json.loads(chart.proto.json)
    figure = json.loads(args["figure"])
    assert chart.key == "calls"
    assert figure["data"] == [{"type": "bar", "x": ["model", "tool"], "y": [2, 1]}]
    assert figure["layout"]["title"]["text"] == "Calls"
    assert figure["layout"]["template"]["layout"]["paper_bgcolor"] == "rgba(0,0,0,0)"
    assert args["config"] == {"displaylogo": False, "responsive": True}
    assert args["bundle"] == ("component/agentsla.dashboard.render.plotly_files/node_modules/"
                              "plotly.js-cartesian-dist-min/plotly-cartesian.min.js")


def test_a_missing_bundle_says_how_to_install_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(render, "CHART_BUNDLE", tmp_path / "absent" / "plotly-cartesian.min.js")
    at = _run(tmp_path)
    assert not at.exception
    assert not at.get("bidi_component")
    [error] = at.error
    assert "plotly-cartesian.min.js is missing" in error.value and "npm ci" in error.value


PAGE = """
import streamlit as st
from agentsla.dashboard import data, render
data.set_target(data.ApiTarget("http://127.0.0.1:9"))
render.page("Charts", lambda: st.metric("Answer", 1), charts={charts})
"""


@pytest.mark.parametrize("charts", [True, False])
def test_a_chart_page_starts_loading_plotly_before_its_body(tmp_path, charts: bool) -> None:
    app = tmp_path / "app.py"
    app.write_text(PAGE.format(charts=charts))
    at = AppTest.from_file(str(app), default_timeout=30).run()
    assert not at.exception and not at.error
    preloads = [json.loads(c.proto.json) for c in at.sidebar.get("bidi_component")]
    # no figure: chart.js only loads the bundle, in the sidebar where its empty place is not seen
    assert preloads == ([{"bundle": render.CHART_BUNDLE_URL}] if charts else [])
    assert not at.main.get("bidi_component")
