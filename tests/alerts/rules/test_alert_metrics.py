"""Metric values from DuckDB against hand-computed numbers, burn rates included."""

from __future__ import annotations

import dataclasses
import json

import pytest
from queryrows import NS, T0, insert, span, task

from agentsla.alerts.rules.expr import parse
from agentsla.alerts.rules.source import MetricSource
from agentsla.alerts.rules.samples import evaluate
from agentsla.config import SloObjective, load_config
from agentsla.queries.engines.duckdb import DuckDBStore

AT = T0 + 3600 * NS  # evaluate one hour after T0


def _query(con, **alerts) -> MetricSource:
    config = dataclasses.replace(load_config(environ={}), alerts=alerts,
                                 slos=(SloObjective("chat", 0.99), SloObjective("*", 0.999)))
    return MetricSource(DuckDBStore(con.cursor()), config)


def _values(con, text, **alerts):
    samples = evaluate(parse(text), _query(con, **alerts), AT)
    return sorted((tuple(sorted(s.labels.items())), round(s.value, 6), s.count) for s in samples)


@pytest.fixture
def burn(con):
    """chat: in the last 5 min 2 of 10 tasks failed; over the hour 5 of 100 failed.
    search: 1 of 50 failed in the last 5 min (SLO * 99.9 %)."""
    rows = []
    for i in range(90):    # 90 chat tasks 10..55 min in: 3 failed
        rows.append(task(f"c{i}", "failed" if i < 3 else "success", end_s=3600 - 600 - i * 30))
    for i in range(10):    # 10 chat tasks in the last 5 min: 2 failed
        rows.append(task(f"d{i}", "failed" if i < 2 else "success", end_s=3600 - 10 - i * 20))
    for i in range(50):
        rows.append(task(f"s{i}", "failed" if i < 1 else "success", end_s=3600 - 5 - i * 5,
                         task_type="search"))
    insert(con, tasks=rows)


def test_burn_rate_by_window_hand_computed(con, burn):
    # chat 5m: bad 2/10 = 0.2 -> 0.2 / (1 - 0.99) = 20; 1h: 5/100 = 0.05 -> 5
    assert _values(con, 'slo_burn_rate{task_type="chat"} [5m] > 0') == [((("task_type", "chat"),), 20.0, 10)]
    assert _values(con, 'slo_burn_rate{task_type="chat"} [1h] > 0') == [((("task_type", "chat"),), 5.0, 100)]
    # search 5m: 1/50 = 0.02 -> 0.02 / 0.001 = 20 (its SLO is the * default, 99.9 %)
    assert _values(con, "slo_burn_rate by (task_type) [5m] > 0") == [
        ((("task_type", "chat"),), 20.0, 10), ((("task_type", "search"),), 20.0, 50)]


def test_multiwindow_rule_needs_both_windows(con, burn):
    query = _query(con)
    # chat: 1h burn 5 < 14.4, so the P0 page does not fire although 5m burns at 20
    page = parse('slo_burn_rate{task_type="chat"} [1h] > 14.4 and slo_burn_rate{task_type="chat"} [5m] > 14.4')
    assert evaluate(page, query, AT) == []
    ticket = parse('slo_burn_rate{task_type="chat"} [1h] > 3 and slo_burn_rate{task_type="chat"} [5m] > 3')
    [sample] = evaluate(ticket, query, AT)
    assert sample.value == pytest.approx(5.0) and sample.count == 10  # the smaller window's count


def test_task_rates(con):
    insert(con, tasks=[task("a", "success", end_s=3590), task("b", "budget_exhausted", end_s=3590),
                       task("c", "degraded", end_s=3590), task("d", "success", end_s=3590,
                                                                task_type="search")])
    assert _values(con, "budget_exhaustion_rate by (task_type) [5m] > 0") == [
        ((("task_type", "chat"),), round(1 / 3, 6), 3)]
    assert _values(con, "task_success_rate [5m] > 0") == [((), 0.5, 4)]
    assert _values(con, 'fallback_rate{task_type="chat"} [5m] > 0') == [
        ((("task_type", "chat"),), round(1 / 3, 6), 3)]


def test_hop_metrics(con):
    end = 3600 * 1000 - 1000
    insert(con, spans=[span(f"s{i}", None, end - 500, end, task_id=f"t{i}", hop_kind="tool",
                            hop_name="search", error_type="timeout" if i < 2 else None)
                       for i in range(10)]
           + [span(f"q{i}", None, end - 6000, end, task_id=f"t{i}", hop_kind="queue", hop_name="jobs")
              for i in range(4)]
           + [span(f"m{i}", None, end - 2000, end, task_id=f"t{i}", hop_kind="model",
                   hop_name="gpt", input_tokens=600, output_tokens=400, ttft_ms=1500.0,
                   attributes=json.dumps({"gen_ai.provider.name": "openai"}),
                   error_type="server_error" if i < 3 else None) for i in range(4)])
    assert _values(con, 'hop_error_rate{hop_kind="tool"} by (hop_name) [5m] > 0') == [
        ((("hop_kind", "tool"), ("hop_name", "search")), 0.2, 10)]
    # quantiles come from histograms: within the stated 1.1 % (docs/rollups.md)
    [(labels, wait, count)] = _values(con, "queue_wait_p95_seconds [5m] > 0")
    assert (labels, wait, count) == ((("hop_kind", "queue"),), pytest.approx(6.0, rel=0.011), 4)
    [(labels, ttft, count)] = _values(con, 'ttft_p95_seconds{model="gpt"} [5m] > 0')
    assert (labels, ttft, count) == ((("hop_kind", "model"), ("model", "gpt")),
                                     pytest.approx(1.5, rel=0.011), 4)
    # 4 calls x 1000 tokens over 5 minutes = 800 tokens/min; quota 1000 -> 0.8
    assert _values(con, "token_quota_ratio by (model) [5m] > 0",
                   quotas={"tokens_per_minute": {"gpt": 1000}}) == [
        ((("hop_kind", "model"), ("model", "gpt")), 0.8, 4)]
    assert _values(con, "provider_error_rate by (provider) [5m] > 0") == [
        ((("provider", "openai"),), 0.75, 4)]


def test_dead_mans_switch_sees_zero(con):
    assert _values(con, "spans_ingested [10m] == 0") == [((), 0.0, None)]
    insert(con, spans=[span("x", None, 0, 1, received_ns=AT - 60 * NS)])
    assert _values(con, "spans_ingested [10m] > 0") == [((), 1.0, None)]


def test_predict_linear_extrapolates(con):
    from alertkit import FakeQuery

    class Rising(FakeQuery):
        def select(self, selector, at_ns):
            minutes_ago = (AT - at_ns) / NS / 60
            return [type(super().select(selector, at_ns)[0])({"model": "gpt"}, 0.5 - 0.01 * minutes_ago, 10)]

    q = Rising()
    q.set("token_quota_ratio", ({"model": "gpt"}, 0.0))
    # 0.5 now, rising 0.01 a minute: in 30 minutes 0.8; in 60 minutes 1.1
    [soon] = evaluate(parse("predict_linear(token_quota_ratio by (model) [5m], 30m) > 0"), q, AT)
    assert soon.value == pytest.approx(0.8)
    assert evaluate(parse("predict_linear(token_quota_ratio by (model) [5m], 60m) >= 1"), q, AT)


def test_dead_mans_switch_waits_until_it_watched_a_whole_window(con):
    config = dataclasses.replace(load_config(environ={}), alerts={})
    just_started = MetricSource(DuckDBStore(con.cursor()), config, watching_since_ns=AT - 5 * 60 * NS)
    assert evaluate(parse("spans_ingested [10m] == 0"), just_started, AT) == []
    watched = MetricSource(DuckDBStore(con.cursor()), config, watching_since_ns=AT - 10 * 60 * NS)
    assert len(evaluate(parse("spans_ingested [10m] == 0"), watched, AT)) == 1
