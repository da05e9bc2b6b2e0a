"""Build an incident from a simulated outage: the simulator's spans through the real TaskWriter
into DuckDB, then the AlertService ticked over the scenario with a fixed clock."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from agentsla.alerts.service import AlertService
from agentsla.collector.processing.normalize import normalize_request
from agentsla.collector.store.database import open_store
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config
from agentsla.queries.engines.duckdb import cursor_stores
from agentsla.simulator import run

#: Healthy traffic, then a database tool without a timeout hangs; its breaker opens.
SCHEDULE = "baseline:30,tool_no_timeout:180,baseline:30"
SCRIPT = "<script>alert(1)</script>"
RULES = f"""\
groups:
  - name: incident
    rules:
      - alert: TaskSuccessLow
        expr: task_success_rate by (task_type) [2m] < 0.8
        for: 1m
        min_tasks: 5
        labels: {{severity: P0}}
        annotations:
          summary: "{{{{ $labels.task_type }}}} tasks fail {SCRIPT}"
      - alert: ToolErrorRateHigh
        expr: hop_error_rate{{hop_kind="tool"}} by (hop_name) [2m] > 0.2
        for: 1m
        min_tasks: 5
        labels: {{severity: P1}}
"""
STEP_S = 20
END_S = 600


class _WriterSink(SpanExporter):
    """An SDK exporter that encodes spans as OTLP and writes them through the TaskWriter."""

    def __init__(self, writer: TaskWriter, config) -> None:
        self.writer, self.config = writer, config

    def export(self, spans):
        batch = normalize_request(encode_spans(spans), self.config.ingest, time.time_ns())
        self.writer.write(batch.rows, now_ns=max(s.end_time for s in spans))
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def simulate(db_path: Path) -> float:
    """Write the scenario into a DuckDB file; return its start (unix seconds)."""
    config = load_config(environ={})
    con = open_store(db_path)
    try:
        summary = run(SCHEDULE, seed=5, rate=1.0, exporter=_WriterSink(TaskWriter(con, config.tasks),
                                                                       config))
    finally:
        con.close()
    return summary.anchor_unix_nano / 1e9


def alert_config(tmp: Path, hook_url: str):
    """Config: the two rules, a webhook receiver, a 2-minute quiet period."""
    rules = tmp / "rules.yaml"
    rules.write_text(RULES)
    alerts = {"default_rules": False, "slo_rules": False, "rule_files": [str(rules)],
              "evaluation_interval": f"{STEP_S}s", "incidents": {"quiet_period": "2m"},
              "route": {"receiver": "hook", "group_by": ["alertname"], "group_wait": "0s",
                        "group_interval": "1m", "repeat_interval": "1h"},
              "receivers": [{"name": "hook", "webhook_configs": [{"url": hook_url}]}]}
    return dataclasses.replace(load_config(environ={}), alerts=alerts)


def service(con, config, data_dir: Path, now: float) -> AlertService:
    """An AlertService over a DuckDB connection with a fixed clock."""
    return AlertService(config, cursor_stores(con), data_dir, clock=lambda: now)


def drive(svc: AlertService, start: float, end: float) -> None:
    """Tick the service every STEP_S seconds over [start, end), then stop it."""
    async def go():
        t = start
        while t < end:
            await svc.tick(t)
            t += STEP_S
        await svc.stop()
    asyncio.run(go())
