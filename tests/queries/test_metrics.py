"""/metrics over a real store written by the TaskWriter: counters, histograms, exemplars.

The story: at BASE a chat task succeeds in 900 ms, another fails in 5 s because its model call
(gpt-4o) timed out first. Scrapes are read back with prometheus_client's own parsers.
"""

from __future__ import annotations

import math

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_om
from prometheus_client.parser import text_string_to_metric_families as parse_text

from agentsla.collector.store.database import cursor, open_store
from agentsla.collector.store.rollups import RollupWriter
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config
from agentsla.queries.engines.duckdb import DuckDBStore
from agentsla.queries.metrics import Totals, render_metrics, totals as totals_module
from agentsla.queries.metrics.buckets import BUDGET_USED, DURATION, bucket_of
from spanfactory import BASE_NS, make_span

NS = 1_000_000_000
MINUTE = 60 * NS
OPENMETRICS = "application/openmetrics-text; version=1.0.0"
TRACE_OK, TRACE_BAD = "a" * 32, "b" * 32


def _story() -> list[dict]:
    ok = make_span(trace_id=TRACE_OK, span_id="ok-root", hop_kind="gateway", start_ms=0,
                   end_ms=900, http_status=200, task_type="chat")
    bad = make_span(trace_id=TRACE_BAD, span_id="bad-root", hop_kind="gateway", start_ms=0,
                    end_ms=5000, http_status=504, status_code="error", error_type="timeout",
                    task_type="chat")
    model = make_span(span_id="bad-model", parent=bad, hop_kind="model", model="gpt-4o",
                      start_ms=20, end_ms=4000, error_type="timeout")
    return [ok, bad, model]


@pytest.fixture
def con(tmp_path):
    con = open_store(tmp_path / "agentsla.duckdb")
    yield con
    con.close()


def _scrape(con, totals: Totals, now_ns: int, accept: str = "") -> dict[str, float]:
    """Scrape once; return every sample as 'name{label="value",...}' (labels sorted) → value."""
    body, content_type = render_metrics(DuckDBStore(cursor(con)), load_config(environ={}),
                                        totals, now_ns, accept)
    parse = parse_om if "openmetrics" in content_type else parse_text
    return {_key(s.name, s.labels): s.value for f in parse(body.decode()) for s in f.samples}


def _key(name: str, labels: dict[str, str]) -> str:
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def _settled(con) -> Totals:
    """Totals started before the story, and the story written."""
    totals = Totals(BASE_NS - 10 * MINUTE)
    TaskWriter(con, load_config(environ={}).tasks).write(_story(), now_ns=BASE_NS + 6 * NS)
    return totals


def test_counters_follow_the_story(con):
    samples = _scrape(con, _settled(con), BASE_NS + 4 * MINUTE)
    assert samples['agentsla_tasks_total{outcome="success",task_type="chat"}'] == 1
    assert samples['agentsla_tasks_total{outcome="failed",task_type="chat"}'] == 1
    assert samples['agentsla_tasks_total{outcome="lost",task_type="chat"}'] == 0
    assert samples['agentsla_task_gateway_answers_total{result="error",task_type="chat"}'] == 1
    blamed = 'hop_kind="model",hop_name="gpt-4o",{}reason="timeout",task_type="chat"'
    assert samples["agentsla_first_failing_hop_tasks_total{" + blamed.format('outcome="failed",')
                   + "}"] == 1
    assert samples["agentsla_first_failing_hop_seconds_total{" + blamed.format("") + "}"] == 5.0
    model = 'hop_kind="model",hop_name="gpt-4o"'
    assert samples[f"agentsla_hop_calls_total{{{model}}}"] == 1
    assert samples[f'agentsla_hop_errors_total{{{model},reason="timeout"}}'] == 1
    assert samples[f'agentsla_hop_errors_total{{{model},reason="other"}}'] == 0
    assert samples['agentsla_slo_objective{task_type="chat"}'] == 0.999
    # no ratio or quantile is pre-computed
    assert not [k for k in samples if k.split("{")[0].endswith("_ratio") or "quantile=" in k]


def test_task_duration_buckets_are_cumulative_and_exact(con):
    samples = _scrape(con, _settled(con), BASE_NS + 4 * MINUTE)

    def bucket(le: float) -> float:
        return samples[f'agentsla_task_duration_seconds_bucket{{le="{le!r}",task_type="chat"}}']
    les = [float(le) for le in DURATION.le()[:-1]]
    # 0.9 s in the bucket bounded near 1 s; 5 s just above the bound near 5 s (4.9777 s)
    assert [bucket(le) for le in les] == [0] * 7 + [1, 1, 1] + [2] * 6
    assert samples['agentsla_task_duration_seconds_bucket{le="+Inf",task_type="chat"}'] == 2


@pytest.mark.parametrize("accept", ["", OPENMETRICS])
def test_histograms_carry_their_count_and_sum(con, accept):
    samples = _scrape(con, _settled(con), BASE_NS + 4 * MINUTE, accept)
    # the two chat tasks: 0.9 s and 5 s; their roots are the gateway's calls
    assert samples['agentsla_task_duration_seconds_count{task_type="chat"}'] == 2
    assert samples['agentsla_task_duration_seconds_sum{task_type="chat"}'] == pytest.approx(5.9)
    gateway = 'hop_kind="gateway",hop_name="span"'  # the factory names every span "span"
    assert samples[f"agentsla_hop_duration_seconds_sum{{{gateway}}}"] == pytest.approx(5.9)
    # the model call ran from 20 ms to 4000 ms
    model = 'hop_kind="model",hop_name="gpt-4o"'
    assert samples[f"agentsla_hop_duration_seconds_count{{{model}}}"] == 1
    assert samples[f"agentsla_hop_duration_seconds_sum{{{model}}}"] == pytest.approx(3.98)


@pytest.mark.parametrize("ms, slot", [
    (0, 0),                                     # exact zero: the first bucket
    (2 ** (319 / 32), 7),                       # exactly the bound near 1 s: inside it
    (2 ** (319 / 32) * 1.0001, 8),              # just above it: the next one
    (10 ** 7, len(DURATION.bounds)),            # past the last bound (10 min): +Inf
])
def test_classic_bucket_of_a_duration(ms, slot):
    assert DURATION.slot(bucket_of(ms)) == slot


def test_bounds_are_scale5_boundaries_near_conventional_values():
    for le, conventional in zip(DURATION.le(), (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                2.5, 5, 10, 30, 60, 120, 300, 600)):
        k = math.log2(float(le) * 1000) * 32
        assert abs(k - round(k)) < 1e-6 and abs(float(le) / conventional - 1) < 0.011
    assert BUDGET_USED.le()[5] == "1.0"  # 2^0: budget used exactly


def test_a_minute_is_counted_once_it_settled(con):
    totals = _settled(con)
    # the story ended at BASE + 5 s; its minute is not settled 2 minutes later minus a second
    end_minute = (BASE_NS + 5 * NS) // MINUTE * MINUTE
    early = _scrape(con, totals, end_minute + MINUTE + totals.settle_ns - NS)
    assert 'agentsla_tasks_total{outcome="failed",task_type="chat"}' not in early
    late = _scrape(con, totals, end_minute + MINUTE + totals.settle_ns)
    assert late['agentsla_tasks_total{outcome="failed",task_type="chat"}'] == 1


def test_a_late_correction_or_retention_never_makes_a_counter_go_down(con):
    tasks = load_config(environ={}).tasks
    writer = TaskWriter(con, tasks)
    totals = Totals(BASE_NS - 10 * MINUTE)
    root = make_span(trace_id=TRACE_OK, span_id="late-root", hop_kind="gateway", start_ms=0,
                     end_ms=900, http_status=200, task_type="chat")
    child = make_span(span_id="child", parent=root, hop_kind="tool", tool="search",
                      start_ms=10, end_ms=800)
    writer.write([child], now_ns=BASE_NS + NS)
    declared = BASE_NS + int((tasks.default_budget + tasks.lost_grace) * NS) + 10 * NS
    assert writer.sweep_lost(declared) == 1
    after_sweep = _scrape(con, totals, declared + 4 * MINUTE)
    assert after_sweep['agentsla_tasks_total{outcome="lost",task_type=""}'] == 1
    # the root arrives: the task is re-judged a success at BASE, no longer lost
    writer.write([root], now_ns=declared + 5 * MINUTE)
    after_root = _scrape(con, totals, declared + 10 * MINUTE)
    assert con.execute("select sum(lost), sum(success) from task_minutes").fetchone() == (0, 1)
    RollupWriter(con).delete_before(declared + 60 * MINUTE)  # rollup retention
    after_retention = _scrape(con, totals, declared + 12 * MINUTE)
    for before, after in ((after_sweep, after_root), (after_root, after_retention)):
        assert all(after[k] >= v for k, v in before.items() if "_total" in k), \
            [(k, v, after.get(k)) for k, v in before.items() if after.get(k, 0) < v]
    assert after_retention['agentsla_tasks_total{outcome="lost",task_type=""}'] == 1


def test_series_from_the_hour_before_start_appear_at_zero(con):
    TaskWriter(con, load_config(environ={}).tasks).write(_story(), now_ns=BASE_NS + 6 * NS)
    samples = _scrape(con, Totals(BASE_NS + 20 * MINUTE), BASE_NS + 20 * MINUTE)
    assert samples['agentsla_tasks_total{outcome="failed",task_type="chat"}'] == 0
    assert samples['agentsla_task_duration_seconds_bucket{le="+Inf",task_type="chat"}'] == 0


def test_openmetrics_exemplars_carry_trace_ids(con):
    samples = {}
    body, content_type = render_metrics(DuckDBStore(cursor(con)), load_config(environ={}),
                                        _settled(con), BASE_NS + 4 * MINUTE, OPENMETRICS)
    assert content_type.startswith("application/openmetrics-text; version=1.0.0")
    for family in parse_om(body.decode()):
        for s in family.samples:
            samples[_key(s.name, s.labels)] = s.exemplar
    failed = samples['agentsla_tasks_total{outcome="failed",task_type="chat"}']
    assert failed.labels == {"trace_id": TRACE_BAD} and failed.value == 1
    assert samples['agentsla_tasks_total{outcome="success",task_type="chat"}'] is None
    # the slowest task (5 s) marks the bucket holding it
    slow = samples['agentsla_task_duration_seconds_bucket{le="9.955306372960003",'
                   'task_type="chat"}']
    assert slow.labels == {"trace_id": TRACE_BAD} and slow.value == 5.0
    timeout = samples['agentsla_hop_errors_total{hop_kind="model",hop_name="gpt-4o",'
                      'reason="timeout"}']
    assert timeout.labels == {"trace_id": TRACE_BAD}


def test_label_values_beyond_the_cap_share_one_series(con, monkeypatch):
    monkeypatch.setattr(totals_module, "MAX_TASK_TYPES", 1)
    totals = Totals(BASE_NS - 10 * MINUTE)
    spans = [make_span(trace_id=c * 32, span_id=f"root-{c}", hop_kind="gateway", start_ms=0,
                       end_ms=100, task_type=t) for c, t in (("1", "a"), ("2", "b"), ("3", "c"))]
    TaskWriter(con, load_config(environ={}).tasks).write(spans, now_ns=BASE_NS + 6 * NS)
    samples = _scrape(con, totals, BASE_NS + 4 * MINUTE)
    # which type is seen first is the store's row order: one of them keeps its series
    own = [t for t in "abc" if f'agentsla_tasks_total{{outcome="success",task_type="{t}"}}' in samples]
    assert len(own) == 1
    assert samples[f'agentsla_tasks_total{{outcome="success",task_type="{own[0]}"}}'] == 1
    assert samples['agentsla_tasks_total{outcome="success",task_type="_other"}'] == 2


def test_ingest_counters_come_from_health_by_default(con):
    from agentsla.api.app import Ask, _metrics

    health = {"ingest": {"accepted_spans": 7, "queued_bytes": 12, "note": "text is skipped"}}
    ask = Ask({}, {}, load_config(environ={}), BASE_NS, lambda: health,
              totals=Totals(BASE_NS))
    text = _metrics(DuckDBStore(cursor(con)), ask).body.decode()
    assert "# TYPE agentsla_ingest_accepted_spans_total counter\nagentsla_ingest_accepted_spans_total 7.0" in text
    assert "# TYPE agentsla_ingest_queued_bytes gauge\nagentsla_ingest_queued_bytes 12.0" in text
    assert "note" not in text
