"""ClickHouse (chdb) benchmark: N spans in the exporter's table, the materializer and the questions.

    python bench/clickhouse.py --spans 10000000             # a temp chdb store, deleted after
    python bench/clickhouse.py --spans 1000000 --path /tmp/ch1m --keep
    python bench/clickhouse.py --spans 1000000 --path /tmp/ch1m --reuse --questions hop_stats

Data. `--spans` spans of 10 per task (so 10M spans = 1M tasks), spread evenly over the 24 h
before now, generated in ClickHouse SQL from `numbers()` straight into `otel_traces` in the
clickhouseexporter's Map layout (attribute values as strings): a gateway root (task.id,
task.type of 4, tenant.id of 50, a 30 s budget) over an agent span over four model calls
(gpt-4o or claude, tokens) alternating with four tool calls (search, db, browse). 5 % of the
tasks fail: their second tool call times out (error.type timeout) and the root ends in ERROR.
What the materializer writes for those spans is generated too, in its output shape and
consistent with the spans *by construction* (one materializer core would need hours for 100M
spans): task rows, span facts, task traces, hop_spans and finding_spans rows; the rollups
are then built from those rows (`rollups.rebuild`, as shard 0/1). The slice the materializer then
really judges checks that construction: the share of its task rows, and of its span facts,
hop_spans and finding_spans rows, equal to the constructed ones is printed.

Timing, all in one process over one chdb session (chdb admits one data path per process):
- generation: wall and CPU time of each INSERT ... SELECT;
- materializer: `run_pass` of shard 0/1 over `--slice-minutes` of span time in the middle of the
  day (re-judging those tasks from their spans), wall and this process's CPU time, so spans/s
  per core = spans / CPU seconds (the Python materialization is one thread; chdb's own threads
  count in the CPU time too); then `--steady-passes` passes one after the other as a live
  shard runs them, each over the next `--steady-seconds` of span time with the default
  `late_window` (its late spans: none, so what it judges is that span time's tasks, and its
  CPU shows a pass's fixed cost);
- questions over the 24 h window (`--repeat` runs: median and max wall, median CPU of this
  process, chdb's threads included; on a shared machine CPU is the steadier figure): sla_totals,
  sla_by tenant, hop_stats, root_causes, budget_waterfall, slo_window, slo_status (every burn
  window up to the 30 d period), the three series at 1 h steps, and
  task lookup (get_task of a random task, a different one each run), /findings
  (`find_findings`, default thresholds) over the last hour and the whole day, and one random
  task's findings (`task_id`, a 1 h window: the findings of the hour around it that name it);
- with `--store-evidence`, the evidence worker rounds storing every dirty minute's findings
  evidence before the questions (wall and CPU; a generated store has all its minutes dirty);
- storage: bytes on disk per row of each table from system.parts (active parts; otel_traces
  after OPTIMIZE FINAL, agentsla's tables as inserted in one statement each, plus the slice's
  re-judged rows: merging them all took longer than the rest of a 20M run here), otel_traces'
  biggest columns from system.columns.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import platform
import random
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from agentsla.collector.store.clickhouse import rollups
from agentsla.collector.store.clickhouse.materializer import NS, Shard, run_pass
from agentsla.collector.store.clickhouse.url import parse_store_url
from agentsla.config import load_config
from agentsla.queries import budget, hops, root_causes, sla, slo, tasks
from agentsla.queries.findings import evidence, find_findings, resolve_thresholds
from agentsla.queries.engines.clickhouse import ClickHouseStore, open_runner

SPANS_PER_TASK = 10
DAY_NS = 86400 * NS
MS = 10**6

# Per task i (from numbers()): its start, duration (1-5 s), type, tenant and whether it fails.
_TASK = """
    {t0:Int64} + toInt64(i * ({day_ns:Int64} / {tasks:Int64})) as s0,  -- no Int64 overflow
    (1000 + sipHash64(i, 1) % 4000) * 1000000 as dur,
    ['chat', 'search', 'report', 'agentic'][1 + sipHash64(i, 2) % 4] as task_type,
    concat('tenant-', toString(least(sipHash64(i, 3) % 64, sipHash64(i, 4) % 64) % 50))
        as tenant,
    sipHash64(i, 5) % 100 < 5 as fails,
    concat(leftPad(lower(hex(sipHash64(i, 6))), 16, '0'),
           leftPad(lower(hex(sipHash64(i, 7))), 16, '0')) as trace,
    lower(hex(MD5(toString(i)))) as task  -- random order, as UUIDs are (task_name)
"""

# Span j of task i: its start, duration, model and tool.
_SPAN_TIMES = """
    intDiv(dur - 20000000, 8) as step,
    multiIf(j = 0, s0, j = 1, s0 + 5000000, s0 + 10000000 + (j - 2) * step) as start,
    multiIf(j = 0, dur, j = 1, dur - 10000000, intDiv(step * 9, 10)) as span_dur,
    if(sipHash64(i, 10) % 2 = 0, 'gpt-4o', 'claude') as model,
    ['search', 'db', 'browse'][1 + (j + sipHash64(i, 11)) % 3] as tool,
    fails and j = 5 as timed_out
"""

# Span j's parent, name, hop and tokens: what the spans carry and the materializer's typed
# copies (hop_spans, finding_spans) hold, spelled once.
_SPAN_SHAPE = """
    multiIf(j = 0, '', j = 1, leftPad(lower(hex(toUInt64(i * 16 + 1))), 16, '0'),
            leftPad(lower(hex(toUInt64(i * 16 + 2))), 16, '0')) as parent,
    multiIf(j = 0, 'POST /ask', j = 1, 'agent', j % 2 = 0, concat('chat ', model), tool)
        as span_name,
    multiIf(j = 0, 'gateway', j = 1, 'agent', j % 2 = 0, 'model', 'tool') as kind,
    multiIf(j = 0, 'POST /ask', j = 1, 'planner', j % 2 = 0, model, tool) as hop,
    if(j >= 2 and j % 2 = 0, 100 + sipHash64(i, j, 8) % 900, null) as input_tok,
    if(j >= 2 and j % 2 = 0, 10 + sipHash64(i, j, 9) % 300, null) as output_tok
"""

# Span j of task i: 0 root, 1 agent, 2..9 model (even j) and tool (odd j) calls in turn.
_SPANS = f"""
insert into default.otel_traces (Timestamp, TraceId, SpanId, ParentSpanId, SpanName, SpanKind,
    ServiceName, ResourceAttributes, SpanAttributes, Duration, StatusCode, StatusMessage)
select
    fromUnixTimestamp64Nano(start) as Timestamp, trace as TraceId,
    leftPad(lower(hex(toUInt64(i * 16 + j + 1))), 16, '0') as SpanId,
    parent as ParentSpanId, span_name as SpanName,
    if(j = 0, 'SPAN_KIND_SERVER', if(j = 1, 'SPAN_KIND_INTERNAL', 'SPAN_KIND_CLIENT'))
        as SpanKind,
    'gateway' as ServiceName, map('service.name', 'gateway') as ResourceAttributes,
    multiIf(
        j = 0, map('task.id', task, 'task.type', task_type, 'tenant.id', tenant,
                   'budget.total_ms', '30000'),
        j = 1, map('gen_ai.operation.name', 'invoke_agent', 'gen_ai.agent.name', 'planner'),
        j % 2 = 0, map('gen_ai.operation.name', 'chat', 'gen_ai.request.model', model,
                       'gen_ai.usage.input_tokens', toString(assumeNotNull(input_tok)),
                       'gen_ai.usage.output_tokens', toString(assumeNotNull(output_tok))),
        timed_out, map('gen_ai.operation.name', 'execute_tool', 'gen_ai.tool.name', tool,
                       'error.type', 'timeout'),
        map('gen_ai.operation.name', 'execute_tool', 'gen_ai.tool.name', tool))
        as SpanAttributes,
    toUInt64(span_dur) as Duration,
    if(timed_out or (j = 0 and fails), 'STATUS_CODE_ERROR', 'STATUS_CODE_UNSET') as StatusCode,
    if(timed_out, 'read timed out', '') as StatusMessage
from (
    select intDiv(number, {SPANS_PER_TASK}) as i, number % {SPANS_PER_TASK} as j, {_TASK},
        {_SPAN_TIMES}, {_SPAN_SHAPE}
    from numbers({{spans:UInt64}})
)
"""

# The task rows the materializer would write for those spans (collector/tasks/materialize).
_TASKS = f"""
insert into default.agentsla_tasks (task_id, trace_id, root_span_id, root_name, task_type,
    tenant_id, service_name, agent, start_ns, end_ns, duration_ms, outcome, finished,
    gateway_ok, budget_total_ms, budget_used_ratio, budget_exhausted, fallback_used,
    span_count, model_calls, tool_calls, retries, input_tokens, output_tokens, ffh_kind,
    ffh_name, ffh_reason, ffh_span_id, ffh_detail_span_id, first_seen_ns, updated_ns, version)
select task, trace, leftPad(lower(hex(toUInt64(i * 16 + 1))), 16, '0'), 'POST /ask', task_type,
    tenant, 'gateway', 'planner', s0, s0 + dur, dur / 1e6, if(fails, 'failed', 'success'),
    true, not fails, 30000, dur / 1e6 / 30000, false, false, {SPANS_PER_TASK}, 4, 4, 0,
    arraySum(arrayMap(j -> 100 + sipHash64(i, j, 8) % 900, [2, 4, 6, 8])),
    arraySum(arrayMap(j -> 10 + sipHash64(i, j, 9) % 300, [2, 4, 6, 8])),
    if(fails, 'tool', null),
    if(fails, ['search', 'db', 'browse'][1 + (5 + sipHash64(i, 11)) % 3], null),
    if(fails, 'timeout', null),
    if(fails, leftPad(lower(hex(toUInt64(i * 16 + 6))), 16, '0'), null),
    if(fails, leftPad(lower(hex(toUInt64(i * 16 + 6))), 16, '0'), null),
    s0 + dur, s0 + dur, 1
from (select number as i, {_TASK} from numbers({{tasks:UInt64}}))
"""

# Each span its own logical call (no retries); the root's reason is its ERROR status ("error").
_SPAN_FACTS = """
    leftPad(lower(hex(toUInt64(i * 16 + j + 1))), 16, '0') as span,
    multiIf(fails and j = 0, 'error', fails and j = 5, 'timeout', null) as reason
"""

_FACTS = f"""
insert into default.agentsla_span_facts
    (trace_id, span_id, task_id, error_type, is_error, call_id, attempt, version)
select trace, span, task, reason, fails and j in (0, 5), span, 0, 1
from (select intDiv(number, {SPANS_PER_TASK}) as i, number % {SPANS_PER_TASK} as j, {_TASK},
             {_SPAN_FACTS}
      from numbers({{spans:UInt64}}))
"""

_TASK_TRACES = f"""
insert into default.agentsla_task_traces (task_id, trace_id, version)
select task, trace, 1 from (select number as i, {_TASK} from numbers({{tasks:UInt64}}))
"""

# The materializer's copy of those spans for the window questions (schema.HOP_SPAN_COLUMNS).
_HOP_SPANS = f"""
insert into default.agentsla_hop_spans (end_ns, trace_id, span_id, task_id, service_name,
    hop_kind, hop_name, duration_ms, ttft_ms, is_error, error_type, call_id, attempt,
    retry_attempt, input_tokens, output_tokens, provider, version)
select start + span_dur, trace, span, task, 'gateway', kind, hop,
    span_dur / 1e6, null, fails and j in (0, 5), reason, span, 0, null, input_tok, output_tok,
    if(j >= 2 and j % 2 = 0, model, null), 1
from (select intDiv(number, {SPANS_PER_TASK}) as i, number % {SPANS_PER_TASK} as j, {_TASK},
             {_SPAN_FACTS}, {_SPAN_TIMES}, {_SPAN_SHAPE}
      from numbers({{spans:UInt64}}))
"""

# The materializer's finding columns of those spans (schema.FINDING_SPAN_COLUMNS; the tool that
# times out has its error.type, nothing declares timeouts, budgets left, retries or fallbacks).
_FINDING_SPANS = f"""
insert into default.agentsla_finding_spans (end_ns, trace_id, span_id, parent_span_id, task_id,
    name, hop_kind, hop_name, start_ns, duration_ms, is_error, error_type, call_id, attempt,
    input_tokens, output_tokens, version)
select start + span_dur, trace, span, nullIf(parent, ''), task, span_name, kind, hop,
    start, span_dur / 1e6, fails and j in (0, 5), reason, span, 0, input_tok, output_tok, 1
from (select intDiv(number, {SPANS_PER_TASK}) as i, number % {SPANS_PER_TASK} as j, {_TASK},
             {_SPAN_FACTS}, {_SPAN_TIMES}, {_SPAN_SHAPE}
      from numbers({{spans:UInt64}}))
"""


def task_name(i: int) -> str:
    """Task i's id as generated (`_TASK`'s task): 32 hex digits in random order, as UUIDs or
    request ids are; ids in sequence (`t<i>`) put a minute's tasks side by side in every table
    keyed by task id and flatter every lookup by id (docs/scale-out.md, Measured)."""
    return hashlib.md5(str(i).encode()).hexdigest()


def generate(runner, n_spans: int, t0: int) -> dict[str, float]:
    """Fill the store; return the wall and CPU seconds of each insert."""
    params = {"spans": n_spans, "tasks": n_spans // SPANS_PER_TASK, "t0": t0,
              "day_ns": DAY_NS}
    took = {}
    for name, sql in (("spans", _SPANS), ("tasks", _TASKS), ("span_facts", _FACTS),
                      ("task_traces", _TASK_TRACES), ("hop_spans", _HOP_SPANS),
                      ("finding_spans", _FINDING_SPANS)):
        start, cpu = time.perf_counter(), time.process_time()
        runner.arrow(sql, {k: v for k, v in params.items() if "{" + k + ":" in sql})
        took[name] = time.perf_counter() - start
        took[f"{name}_cpu"] = time.process_time() - cpu
    start, cpu = time.perf_counter(), time.process_time()
    rollups.rebuild(runner, "default", Shard(0, 1))  # what the passes would have kept
    took["rollups"], took["rollups_cpu"] = time.perf_counter() - start, time.process_time() - cpu
    return took


def _newest_span_end(runner) -> int:
    """The end (unix ns) of the newest span of a kept store: where its generated day ends."""
    (row,) = runner.arrow("select max(toUnixTimestamp64Nano(Timestamp) + Duration) as end_ns "
                          "from default.otel_traces", {}).to_pylist()
    if row["end_ns"] is None:
        raise SystemExit("--reuse: the store at --path holds no spans")
    return row["end_ns"]


def materialize_slice(runner, t0: int, minutes: float, now_ns: int) -> dict:
    """Re-judge the tasks of `minutes` of span time mid-day with the real materializer."""
    mark = t0 + DAY_NS // 2
    runner.insert("default.agentsla_watermarks",
                  [{"shard": "0/1", "watermark_ns": mark, "version": 2}])
    before = {r["task_id"]: r for r in runner.arrow(
        "select * from default.tasks where end_ns >= {lo:Int64} and end_ns < {hi:Int64}",
        {"lo": mark, "hi": mark + int(minutes * 60 * NS)}).to_pylist()}
    base = load_config(environ={}).tasks
    config = dataclasses.replace(base, late_window=0.0, materialize_max_window=minutes * 60,
                                 root_grace=0.0)
    spans_before = _span_rows(runner, sorted(before))
    cpu, wall = time.process_time(), time.perf_counter()
    result = run_pass(runner, "default", "otel_traces", Shard(0, 1), config, now_ns)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert before and result.spans, "the slice holds no tasks: check the generated times"
    after = {r["task_id"]: r for r in runner.arrow(
        "select * from default.tasks where has({ids:Array(String)}, task_id)",
        {"ids": sorted(before)}).to_pylist()}
    keys = ("outcome", "span_count", "model_calls", "tool_calls", "input_tokens",
            "output_tokens", "ffh_kind", "ffh_name", "ffh_reason", "end_ns")
    same = sum(all(after.get(t, {}).get(k) == row[k] for k in keys) for t, row in before.items())
    spans_after = _span_rows(runner, sorted(before))
    same_spans = sum(spans_after.get(key) == row for key, row in spans_before.items())
    return {"spans": result.spans, "tasks": result.tasks, "wall_s": wall, "cpu_s": cpu,
            "spans_per_s": result.spans / wall, "spans_per_cpu_s": result.spans / cpu,
            "constructed_rows_confirmed": f"{same}/{len(before)}",
            "constructed_span_rows_confirmed": f"{same_spans}/{len(spans_before)}"}


def steady_pass(runner, seconds: float, now_ns: int) -> dict:
    """One pass after the slice as a live shard runs it: `seconds` of span time past the
    watermark the slice left, the default late window behind it."""
    config = dataclasses.replace(load_config(environ={}).tasks, root_grace=0.0,
                                 materialize_max_window=seconds)
    cpu, wall = time.process_time(), time.perf_counter()
    result = run_pass(runner, "default", "otel_traces", Shard(0, 1), config, now_ns)
    return {"spans": result.spans, "tasks": result.tasks, "late_window_s": config.late_window,
            "wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}


def _span_rows(runner, task_ids: list[str]) -> dict:
    """The span facts, hop_spans and finding_spans rows of those tasks, keyed by (table, trace,
    span)."""
    out = {}
    for table in ("agentsla_span_facts", "hop_spans", "finding_spans"):
        for row in runner.arrow(f"select * from default.{table} final where task_id in "
                                "{ids:Array(String)}", {"ids": task_ids}).to_pylist():
            row.pop("version", None)
            out[(table, row["trace_id"], row["span_id"])] = row
    return out


def time_questions(store, runner, t0: int, end: int, repeat: int, n_tasks: int,
                   only: set[str] | None = None) -> dict:
    """Wall seconds (median, max over `repeat`) of each question over the 24 h window."""
    hour = 3600 * NS
    rng = random.Random(7)
    questions = {
        "sla_totals": lambda: sla.sla_totals(store, t0, end),
        "sla_by_tenant": lambda: sla.sla_by(store, t0, end, "tenant_id"),
        "hop_stats": lambda: hops.hop_stats(store, t0, end),
        "root_causes": lambda: root_causes.root_causes(store, t0, end),
        "budget_waterfall": lambda: budget.budget_waterfall(store, t0, end),
        "slo_window": lambda: slo.slo_window(store, load_config(), t0, end),
        # every burn window up to the 30 d period, in one statement (the alerts' SLO status)
        "slo_status": lambda: slo.slo_status(store, load_config(), end),
        "sla_series_1h": lambda: sla.sla_series(store, t0, end, hour),
        "hop_series_1h": lambda: hops.hop_series(store, t0, end, hour),
        "root_cause_series_1h": lambda: root_causes.root_cause_series(store, t0, end, hour),
        "task_lookup": lambda: tasks.get_task(store, task_name(rng.randrange(n_tasks))),
        # an empty list is an answer too: the check below asks for a non-empty value
        "findings_1h": lambda: {"found": find_findings(store, end - hour, end, None, {})},
        "findings_24h": lambda: {"found": find_findings(store, t0, end, None, {})},
        # one task's findings: its own spans, and the findings naming it of an hour around it
        "task_findings_1h": lambda: {"found": find_findings(
            store, end - hour, end, None, {}, task_id=task_name(rng.randrange(n_tasks)))},
    }
    out = {}
    for name, ask in questions.items():
        if only and name not in only:
            continue
        runs, cpus = [], []
        for _ in range(repeat):
            start, cpu = time.perf_counter(), time.process_time()
            answer = ask()
            runs.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
        assert answer, f"{name} answered nothing"
        out[name] = {"median_s": statistics.median(runs), "max_s": max(runs),
                     "median_cpu_s": statistics.median(cpus)}
        print(f"  {name:22s} median {out[name]['median_s']:8.3f} s wall "
              f"{out[name]['median_cpu_s']:8.3f} s CPU   max {max(runs):8.3f} s", flush=True)
    return out


def storage(runner) -> dict:
    """Bytes on disk per row of each table, and otel_traces' biggest columns."""
    parts = runner.arrow(
        "select table, sum(rows) as rows, sum(bytes_on_disk) as bytes, "
        "sum(data_uncompressed_bytes) as raw from system.parts where active and "
        "database = 'default' group by table order by bytes desc", {}).to_pylist()
    columns = runner.arrow(
        "select name, data_compressed_bytes as bytes, data_uncompressed_bytes as raw from "
        "system.columns where database = 'default' and table = 'otel_traces' "
        "order by bytes desc limit 8", {}).to_pylist()
    return {"tables": {p["table"]: {"rows": p["rows"], "bytes": p["bytes"],
                                    "bytes_per_row": p["bytes"] / max(p["rows"], 1),
                                    "ratio": p["raw"] / max(p["bytes"], 1)} for p in parts},
            "otel_traces_columns": columns}


def store_evidence(store) -> dict:
    """Run evidence worker rounds until no minute is dirty; return minutes, wall and CPU s."""
    cpu, wall, minutes, rounds = time.process_time(), time.perf_counter(), 0, 0
    while True:
        did = evidence.refresh(store, resolve_thresholds({}))
        minutes, rounds = minutes + did.minutes, rounds + 1
        if not did.pending:
            break
    took = {"minutes": minutes, "rounds": rounds, "wall_s": time.perf_counter() - wall,
            "cpu_s": time.process_time() - cpu}
    print(f"evidence stored: {minutes} minutes in {rounds} rounds, {took['wall_s']:.1f} s wall, "
          f"{took['cpu_s']:.1f} s CPU", flush=True)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--path", help="chdb data path (default: a temp dir)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the data path (--reuse keeps it too)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--slice-minutes", type=float, default=10.0,
                        help="span time the materializer judges")
    parser.add_argument("--steady-seconds", type=float, default=5.0,
                        help="span time of the steady pass after the slice (the default "
                             "materialize_interval)")
    parser.add_argument("--steady-passes", type=int, default=3,
                        help="steady passes, one after the other (each over the next "
                             "--steady-seconds)")
    parser.add_argument("--questions", help="comma-separated names of the questions to time "
                        "(default: all), e.g. sla_totals,hop_stats")
    parser.add_argument("--reuse", action="store_true",
                        help="time the questions over the store at --path as it is (generated by an "
                             "earlier --keep run of the same --spans; no generation, no "
                             "materializer slice): its day ends at its newest span")
    parser.add_argument("--store-evidence", action="store_true",
                        help="before the questions, store the findings evidence of every dirty "
                             "minute (evidence worker rounds, as shard 0 runs them), timed")
    args = parser.parse_args()
    if args.reuse and not args.path:
        parser.error("--reuse needs --path (a store an earlier run kept)")
    path = Path(args.path or tempfile.mkdtemp(prefix="agentsla-chbench-"))
    runner = open_runner(parse_store_url(f"chdb://{path}"))
    try:
        print(f"chdb at {path}; {args.spans:,} spans, {args.spans // SPANS_PER_TASK:,} tasks "
              f"over 24 h; {platform.processor() or platform.machine()}, "
              f"{len(__import__('os').sched_getaffinity(0))} cores", flush=True)
        if args.reuse:  # no generation, and no slice: the kept store's was judged when made
            now, took, mat = _newest_span_end(runner) + 1, {}, None
        else:
            now = time.time_ns()
            took = generate(runner, args.spans, now - DAY_NS)
            runner.execute("optimize table default.otel_traces final")  # merged, as at rest
            print("generated: " + ", ".join(f"{k} {v:.1f} s" for k, v in took.items()),
                  flush=True)
            mat = materialize_slice(runner, now - DAY_NS, args.slice_minutes, now)
            print(f"materializer: {mat['spans']:,} spans, {mat['tasks']:,} tasks in "
                  f"{mat['wall_s']:.1f} s wall, {mat['cpu_s']:.1f} s CPU: "
                  f"{mat['spans_per_s']:,.0f} spans/s, {mat['spans_per_cpu_s']:,.0f} spans/CPU-s; "
                  f"constructed task rows confirmed {mat['constructed_rows_confirmed']}, span rows "
                  f"{mat['constructed_span_rows_confirmed']}", flush=True)
            mat["steady"] = [steady_pass(runner, args.steady_seconds, now)
                             for _ in range(args.steady_passes)]
            for steady in mat["steady"]:
                print(f"steady pass: {steady['spans']:,} spans, {steady['tasks']:,} tasks over "
                      f"{args.steady_seconds:g} s of span time (late window "
                      f"{steady['late_window_s']:g} s) in {steady['wall_s']:.1f} s wall, "
                      f"{steady['cpu_s']:.1f} s CPU", flush=True)
        stored = store_evidence(ClickHouseStore(runner)) if args.store_evidence else None
        t0 = now - DAY_NS
        print("questions over 24 h:", flush=True)
        questions = time_questions(ClickHouseStore(runner), runner, t0, now + 1, args.repeat,
                                   args.spans // SPANS_PER_TASK,
                                   set(args.questions.split(",")) if args.questions else None)
        disk = storage(runner)
        for table, row in disk["tables"].items():
            print(f"  {table:22s} {row['rows']:>12,} rows {row['bytes'] / 2**20:9.1f} MiB "
                  f"{row['bytes_per_row']:7.1f} B/row (x{row['ratio']:.1f} compression)")
        print(json.dumps({"spans": args.spans, "generate_s": took, "materializer": mat,
                          "evidence": stored,
                          "questions": questions, "storage": disk,
                          "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                          // 1024}, default=str))
    finally:
        runner.close()
        if not (args.keep or args.reuse):  # a reused store is kept: it was made to be
            shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
