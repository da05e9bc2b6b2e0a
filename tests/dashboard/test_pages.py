"""Every page under Streamlit's AppTest against a real server holding data: no exception, no
error box, and the key numbers equal the API's, formatted by dashboard.fmt."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from streamlit.testing.v1 import AppTest

from agentsla.dashboard import fmt
from seed import APP, OTHER_SERVICE, SERVICE
from serverproc import ServerProcess, free_port
from slowapi import settle

TIMEOUT = 60


def _app(monkeypatch, api_url: str, **query) -> AppTest:
    monkeypatch.setenv("AGENTSLA_API", api_url)
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params.update(query)
    return at


def _open(at: AppTest, page: str) -> AppTest:
    at.run()
    settle(at.switch_page(f"views/{page}.py").run())
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _figure(at: AppTest, key: str) -> dict:
    """The Plotly figure (as JSON) of the chart shown with `key` (render.chart's component)."""
    return next(json.loads(json.loads(c.proto.json)["figure"])
                for c in at.get("bidi_component") if c.key == key)


def _texts(at: AppTest) -> str:
    parts = [e.value for kind in ("markdown", "caption", "subheader", "info", "title", "success")
             for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def test_overview_shows_the_apis_rates(seeded, monkeypatch) -> None:
    at = _open(_app(monkeypatch, seeded.api_url), "overview")
    totals = seeded.api("/api/v1/sla", window="1h").json()["totals"]
    # 19 successes of 25 tasks of agent-gateway, plus billing-gateway's one success
    assert _metric(at, "Task success") == fmt.pct(totals["success_rate"]) == "76.9%"
    assert _metric(at, "Gateway success") == fmt.pct(totals["gateway_success_rate"])
    assert _metric(at, "Degraded (fallback)") == fmt.pct(totals["degraded_rate"])
    assert _metric(at, "Budget exhausted") == fmt.pct(totals["budget_exhausted_rate"])
    assert _metric(at, "Finished tasks") == fmt.count(totals["finished"])
    per_type = at.table[-1].value
    assert set(per_type["task type"]) == {"chat", "research"}
    slo = at.table[0].value
    assert "burn 5m" in slo.columns


def test_filters_come_from_the_url_and_apply(seeded, monkeypatch) -> None:
    at = _open(_app(monkeypatch, seeded.api_url, task_type="chat", window="6h"), "overview")
    assert at.sidebar.selectbox(key="flt_task_type").value == "chat"
    assert at.sidebar.selectbox(key="flt_window").value == "6h"
    totals = seeded.api("/api/v1/sla", window="6h", task_type="chat").json()["totals"]
    assert _metric(at, "Task success") == fmt.pct(totals["success_rate"])
    assert _metric(at, "Finished tasks") == fmt.count(totals["finished"]) == "19"
    assert at.query_params["task_type"] == "chat"
    at.sidebar.selectbox(key="flt_tenant_id").select("acme").run()
    assert at.query_params["tenant"] == "acme"


@pytest.mark.parametrize("service, success, finished", [
    (SERVICE, "76.0%", "25"),       # 19 successes of its 25 tasks
    (OTHER_SERVICE, "100.0%", "1"),  # its single task succeeded
])
def test_service_filter_applies_to_the_overview(seeded, monkeypatch, service, success,
                                                finished) -> None:
    at = _open(_app(monkeypatch, seeded.api_url, service=service), "overview")
    assert at.sidebar.selectbox(key="flt_service_name").value == service
    totals = seeded.api("/api/v1/sla", window="1h", service_name=service).json()["totals"]
    assert _metric(at, "Task success") == fmt.pct(totals["success_rate"]) == success
    assert _metric(at, "Finished tasks") == fmt.count(totals["finished"]) == finished
    # the headline is filtered; only the SLO section (per task type) says it cannot be
    notes = [w.value for w in at.warning]
    assert notes == ["The API cannot filter the error budgets by service (/api/v1/slo has no "
                     "such parameter); showing all of them."]
    assert at.query_params["service"] == service


def test_root_causes_pareto_and_examples(seeded, monkeypatch) -> None:
    at = _open(_app(monkeypatch, seeded.api_url), "root_causes")
    answer = seeded.api("/api/v1/root-causes", window="1h").json()
    assert _metric(at, "Blamed tasks (failed, degraded, budget exhausted, rejected)") == \
        fmt.count(answer["blamed_tasks"]) == "6"
    top = answer["root_causes"][0]
    assert f"Example tasks: {fmt.hop(top['ffh_kind'], top['ffh_name'], top['ffh_reason'])}" \
        in _texts(at)
    assert at.dataframe[0].value["tasks"].tolist() == [fmt.count(c["tasks"])
                                                        for c in answer["root_causes"]]


def test_hops_page(seeded, monkeypatch) -> None:
    at = _open(_app(monkeypatch, seeded.api_url), "hops")
    hops = seeded.api("/api/v1/hops", window="1h").json()["hops"]
    assert _metric(at, "Calls (spans)") == fmt.count(sum(h["calls"] for h in hops))
    assert _metric(at, "429s") == fmt.count(sum(h["rate_limited"] for h in hops)) == "6"
    table = at.table[0].value
    gpt = table[(table["kind"] == "model") & (table["name"] == "gpt-4o")].iloc[0]
    api_gpt = next(h for h in hops if h["hop_name"] == "gpt-4o")
    assert gpt["p95"] == fmt.duration(api_gpt["latency_p95_ms"])
    assert gpt["attempts/call"] == fmt.ratio(api_gpt["attempts_per_call"])
    # the heatmap: one row per hop of the API's series, one column per minute of the hour
    series = seeded.api("/api/v1/hops", window="1h", step="1m").json()["series"]
    heat = _figure(at, "hop_heatmap")["data"][0]
    assert heat["type"] == "heatmap" and heat["colorbar"]["title"]["text"] == "Error rate"
    assert set(heat["y"]) == {fmt.hop(r["hop_kind"], r["hop_name"]) for r in series}
    assert len(heat["x"]) == 60
    # the window starts on a whole minute, so the API reads its buckets from the rollups
    assert datetime.fromisoformat(heat["x"][0]).second == 0
    assert sum(v is not None for row in heat["z"] for v in row) == pytest.approx(len(series), abs=2)
    at.radio(key="hop_heat").set_value("latency_p95_ms").run()
    assert not at.exception and not at.error
    heat = _figure(at, "hop_heatmap")["data"][0]
    assert heat["colorbar"]["title"]["text"] == "p95 latency"
    assert max(v for row in heat["z"] for v in row if v is not None) == max(
        r["latency_p95_ms"] for r in series)


def test_hops_page_filtered_by_service(seeded, monkeypatch) -> None:
    at = _open(_app(monkeypatch, seeded.api_url, service=OTHER_SERVICE), "hops")
    hops = seeded.api("/api/v1/hops", window="1h", service_name=OTHER_SERVICE).json()["hops"]
    # one success task: gateway, agent, model and tool, one call each
    assert _metric(at, "Calls (spans)") == fmt.count(sum(h["calls"] for h in hops)) == "4"
    assert not at.warning


def test_budgets_and_findings_page(seeded, monkeypatch) -> None:
    at = _open(_app(monkeypatch, seeded.api_url), "budgets")
    budget = seeded.api("/api/v1/budget", window="1h").json()
    assert _metric(at, "Average duration") == fmt.duration(budget["avg_duration_ms"])
    assert _metric(at, "Budget left unused") == fmt.pct(budget["unused_budget_share"])
    findings = seeded.api("/api/v1/findings", window="1h")
    if findings.status_code == 404:
        assert "Findings are not available from this API" in _texts(at)
    else:
        found = findings.json()["findings"]
        assert len(at.expander) == len(found)


def test_task_explorer_lists_and_opens_a_task(seeded, monkeypatch) -> None:
    at = _open(_app(monkeypatch, seeded.api_url), "tasks")
    listed = seeded.api("/api/v1/tasks", window="1h", limit=200).json()["tasks"]
    assert at.dataframe[0].value["task id"].tolist() == [t["task_id"] for t in listed]
    task = next(t for t in listed if t["outcome"] == "budget_exhausted")
    settle(at.text_input(key="tx_task").input(task["task_id"]).run())
    assert not at.exception and not at.error
    assert at.query_params["task"] == task["task_id"]
    assert _metric(at, "Outcome") == "budget exhausted"
    assert _metric(at, "Duration") == fmt.duration(task["duration_ms"])
    assert "**First failing hop:** :red[model gpt-4o] · reason **timeout**" in _texts(at)
    assert at.expander[0].label == "Span attributes"


def test_task_explorer_opens_from_a_shared_url(seeded, monkeypatch) -> None:
    task = seeded.api("/api/v1/tasks", window="1h", outcome="degraded").json()["tasks"][0]
    at = _open(_app(monkeypatch, seeded.api_url, task=task["task_id"]), "tasks")
    assert at.text_input(key="tx_task").value == task["task_id"]
    assert _metric(at, "Outcome") == "degraded"
    assert _metric(at, "Retries") == fmt.count(task["retries"])


def test_unknown_task_is_a_message(seeded, monkeypatch) -> None:
    at = _open(_app(monkeypatch, seeded.api_url, task="no-such-task"), "tasks")
    assert "unknown task 'no-such-task'" in at.warning[0].value


def test_alerts_page_says_not_configured(seeded, monkeypatch) -> None:
    at = _open(_app(monkeypatch, seeded.api_url), "alerts")
    if seeded.api("/api/v1/alerts").status_code == 404:
        assert at.info[0].value.startswith("Alerts are not configured")


@pytest.mark.parametrize("page", ["overview", "root_causes", "hops", "budgets", "tasks", "alerts"])
def test_api_down_is_said_plainly_then_recovers(tmp_path, monkeypatch, page) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    at = _app(monkeypatch, url).run()
    at.switch_page(f"views/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.error and at.error[0].value.startswith(f"cannot reach the agentsla API at {url}")
    if page != "overview":
        return  # one page proves recovery; starting a server per page costs CI time
    server = ServerProcess(tmp_path / "data", api_port=port).start()
    try:
        at.run()
        assert not at.error and not at.exception
        assert _metric(at, "Finished tasks") == "0"
    finally:
        server.stop()
