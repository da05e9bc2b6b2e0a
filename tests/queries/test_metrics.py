"""Exposition helpers: label escaping and value spelling."""

from __future__ import annotations

import pytest

from agentsla.queries.metrics import escape_label, family, format_value


@pytest.mark.parametrize("raw, escaped", [
    ("chat", "chat"),
    ('say "hi"', 'say \\"hi\\"'),
    ("a\\b", "a\\\\b"),
    ("two\nlines", "two\\nlines"),
])
def test_escape_label(raw, escaped):
    assert escape_label(raw) == escaped


@pytest.mark.parametrize("value, text", [
    (3, "3"), (0.5, "0.5"), (float("inf"), "+Inf"), (float("-inf"), "-Inf"),
    (float("nan"), "NaN"), (True, "1")])
def test_format_value(value, text):
    assert format_value(value) == text


def test_family_skips_undefined_samples():
    lines = family("x_ratio", "gauge", "help\nwith newline", [({"t": 'a"'}, 0.25), ({"t": "b"}, None)])
    assert lines == ["# HELP x_ratio help with newline", "# TYPE x_ratio gauge",
                     'x_ratio{t="a\\""} 0.25']


def test_ingest_counters_come_from_health_by_default():
    import duckdb

    from agentsla.collector.store.schema import migrate
    from agentsla.config import load_config
    from agentsla.api.app import _metrics, Ask
    from agentsla.queries.engines.duckdb import DuckDBStore

    con = duckdb.connect()
    migrate(con)
    health = {"ingest": {"accepted_spans": 7, "queued_bytes": 12, "note": "text is skipped"}}
    ask = Ask({}, {}, load_config(environ={}), 10**18, lambda: health)
    text = _metrics(DuckDBStore(con.cursor()), ask).body.decode()
    assert "# TYPE agentsla_ingest_accepted_spans_total counter\nagentsla_ingest_accepted_spans_total 7" in text
    assert "# TYPE agentsla_ingest_queued_bytes gauge\nagentsla_ingest_queued_bytes 12" in text
    assert "note" not in text
    con.close()
