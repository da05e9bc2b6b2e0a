"""Query benchmark: time each query-API answer over 1M-10M spans of synthetic agent traffic.

    python bench/queries.py --spans 1000000 --repeat 10
    python bench/queries.py --spans 10000000 --data-dir /tmp/q10m --keep   # keep the file
    python bench/queries.py --data-dir /tmp/q10m --reuse                   # time it again

Data. About 10 spans per task (so 1M spans = ~100k tasks), spread over the 24 h before now:
gateway root -> queue wait -> agent -> alternating model and tool calls (2-5 model calls), with
retried attempts (rate-limited model calls, timed-out tools), tokens and time to first token on
model calls, budgets on 75 % of the tasks, four task types and 50 tenants (skewed). Outcomes:
~85 % success, degraded (a model failed, a backup model served), failed, budget_exhausted,
rejected (429 at the gateway, no other span), lost (no root), cancelled; tasks still running at
"now" are in progress with only their ended spans stored, as a live server would hold them.

Everything is generated in DuckDB SQL from hash-based pseudo-random columns (`hash(i, salt)`),
one chunk of tasks at a time: the chunk's spans are appended to span_store in arrival order
(received_ns = end + export delay; a live server appends a span when it ends) and its task rows,
aggregated from those spans, to task_store in first-seen order, as the writer would. The task
rows (outcome, first failing hop, counts, tokens) are consistent with the span shapes *by
construction*, not computed by `collector.tasks.materialize_task` (on a 400-task sample,
outcome, first failing hop and counts matched it; end_ns differed by float rounding): close
enough for meaningful timings, not an exact replay of the writer. Do not use this data to test
correctness.

Timing. The file is served by a real `agentsla serve --data-dir` (tests/serverproc.py); requests
go over loopback with httpx, one at a time, and each figure is wall time from request to the last
byte of the answer. For each route: the first call after the server started ("cold": DuckDB's
buffer pool is empty, the OS page cache is whatever it is) then `--repeat` warm calls (median,
p95). /tasks/{id} and /traces/{id} use a different random id on every call. Every window
(24h, 1h) is sent as `from`/`to` ending at the file's newest span end, so a file reused hours
after it was made is timed over the same data as a fresh one. The overview is
/sla + /root-causes + /hops (window=24h) called one after the other, timed before the heavy
routes (a /findings answer just before it left the server busy). /findings (1h, 24h) is
timed once the findings evidence worker has stored every minute of the file (a file new to
this version has every minute pending; `evidence_backfill_s` says how long that took). The
server runs with AGENTSLA_LOST_GRACE=7d so the lost-task sweep does not rewrite tasks while we
measure.
`--server api` serves the file with the query API alone (create_api_app under uvicorn, one
DuckDB connection, a cursor per request, as `agentsla serve` wires it) without the ingest side.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import duckdb
import httpx

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from serverproc import ServerProcess  # noqa: E402

from agentsla.collector.store.schema import (SPAN_COLUMN_NAMES, TASK_COLUMN_NAMES,  # noqa: E402
                                             fill_self_times)
from agentsla.collector.store import rollups  # noqa: E402
from agentsla.collector.store.database import open_store  # noqa: E402
from agentsla.queries.window import parse_span  # noqa: E402

NS = 1_000_000_000
DAY_NS = 86_400 * NS
SPANS_PER_TASK = 9.8  # measured mean of the shapes below; used only to size the task count
CHUNK_TASKS = 100_000

# --- generation ----------------------------------------------------------------------------------

#: One row per task of the chunk [$lo, $hi): identity, shape and intended outcome.
_TASKS_SQL = """
create or replace temp table gen_task as
with base as (
    select i,
        hash(i, 1) / 18446744073709551616.0 as u_type,
        hash(i, 2) / 18446744073709551616.0 as u_tenant,
        hash(i, 3) / 18446744073709551616.0 as u_out,
        hash(i, 4) / 18446744073709551616.0 as u_calls,
        hash(i, 5) / 18446744073709551616.0 as u_dur,
        hash(i, 6) / 18446744073709551616.0 as u_budget,
        hash(i, 7) / 18446744073709551616.0 as u_model,
        hash(i, 8) / 18446744073709551616.0 as u_fail,
        hash(i, 9) / 18446744073709551616.0 as u_reason,
        hash(i, 10) / 18446744073709551616.0 as u_q
    from range($lo, $hi) t(i)
),
typed as (
    select *,
        case when u_type < 0.45 then 'chat' when u_type < 0.70 then 'research'
             when u_type < 0.90 then 'triage' else 'codegen' end as task_type,
        'tenant-' || lpad(cast(floor(50 * u_tenant * u_tenant) as varchar), 2, '0') as tenant_id,
        case when u_out < 0.855 then 'success' when u_out < 0.905 then 'degraded'
             when u_out < 0.945 then 'failed' when u_out < 0.965 then 'budget_exhausted'
             when u_out < 0.980 then 'rejected' when u_out < 0.990 then 'lost'
             else 'cancelled' end as plan,
        2 + cast(floor(u_calls * 5) as integer) as models,
        case when u_model < 0.45 then 'gpt-4o' when u_model < 0.75 then 'claude-sonnet-4'
             when u_model < 0.90 then 'gpt-4o-mini' else 'gemini-2.0-flash' end as model,
        $t0 + cast(i - $first as bigint) * $spacing
            + cast((hash(i, 11) % 1000) * $spacing / 1000 as bigint) as start_ns,
        printf('%016x%016x', hash(i, 12), hash(i, 13)) as trace_id
    from base
),
shaped as (
    select *,
        2 * models - 1 as steps,
        case task_type when 'chat' then 20000 when 'research' then 120000
                       when 'triage' then 45000 else 90000 end as type_budget_ms,
        case task_type when 'chat' then 3000 when 'research' then 25000
                       when 'triage' then 6000 else 12000 end as base_ms
    from typed
),
planned as (
    select *,
        case when u_budget < 0.75 or plan = 'budget_exhausted' then type_budget_ms::double end
            as budget_ms,
        -- the step that fails: a model step for degraded (its fallback serves), any for failed
        case when plan = 'degraded' then 2 * cast(floor(u_fail * models) as integer)
             when plan in ('failed', 'budget_exhausted') then cast(floor(u_fail * steps) as integer)
        end as fail_step,
        case when plan in ('failed', 'budget_exhausted', 'cancelled')
             then cast(floor(u_fail * steps) as integer) + 1 else steps end as run_steps
    from shaped
),
timed as (
    select *,
        case when plan = 'rejected' then 5 + 45 * u_dur
             when plan = 'budget_exhausted' then budget_ms * (1.0 + 0.2 * u_dur)
             else greatest(400, base_ms * (0.4 + 1.6 * u_dur + 4 * pow(u_dur, 8))) end as dur_ms
    from planned
)
select *,
    start_ns + cast(dur_ms * 1e6 as bigint) as root_end_ns,
    cast(dur_ms * 1e6 * 0.02 * u_q as bigint) + 1000000 as queue_ns,
    case when fail_step is null then null when fail_step % 2 = 0 then 'model' else 'tool' end
        as fail_kind,
    case when plan = 'budget_exhausted' then 'timeout'
         when fail_step is null then null
         when fail_step % 2 = 0 then
             case when u_reason < 0.40 then 'timeout' when u_reason < 0.60 then 'rate_limited'
                  when u_reason < 0.75 then 'server_error' when u_reason < 0.85
                  then 'context_overflow' else 'invalid_response' end
         else case when u_reason < 0.40 then 'timeout' when u_reason < 0.70
                   then 'connection_error' else 'server_error' end
    end as fail_reason,
    printf('%08x-%04x-%04x-%012x', hash(i, 14) % 4294967296, hash(i, 15) % 65536,
           hash(i, 16) % 65536, hash(i, 17) % 281474976710656) as task_id
from timed
"""

_TOOLS = "['web_search', 'sql_query', 'code_exec', 'vector_search', 'http_fetch', 'send_email']"

#: Every span of the chunk's tasks: slot 0 root, 1 queue, 2 agent, 3+2s step s (attempt 0),
#: 4+2s its second attempt (a retry, or the fallback of a degraded task). Only ended spans.
_SPANS_SQL = """
create or replace temp table gen_span as
with slots as (
    select t.*, slot,
        case when slot >= 3 then (slot - 3) // 2 end as step,
        case when slot >= 3 then (slot - 3) % 2 end as attempt,
        hash(t.i, 100 + slot) / 18446744073709551616.0 as u_s,
        hash(t.i, 200 + (slot - 3) // 2) / 18446744073709551616.0 as u_retry
    from gen_task t, range(3 + 2 * t.run_steps) r(slot)
),
kept as (
    select *,
        case when step is null then null when step % 2 = 0 then 'model' else 'tool' end as call_kind,
        -- a second attempt exists when the first was retried or a degraded task fell back
        (step is not null and ((step % 2 = 0 and u_retry < 0.10)
                               or (step % 2 = 1 and u_retry < 0.05)
                               or (plan = 'degraded' and step = fail_step))) as retried
    from slots
    where not (plan = 'rejected' and slot > 0) and not (plan = 'lost' and slot = 0)
),
placed as (
    select *,
        start_ns + queue_ns + 2000000 as agent_lo,
        root_end_ns - 1000000 as agent_hi
    from kept
    where attempt is null or attempt = 0 or retried
),
timed as (
    select *,
        (agent_hi - agent_lo) / run_steps as width,
        case when step is not null then agent_lo + (agent_hi - agent_lo) / run_steps * step end
            as slot_lo
    from placed
),
spans as (
    select *,
        case slot when 0 then start_ns when 1 then start_ns + 1000000 when 2 then agent_lo
             else case when attempt = 0 then slot_lo else slot_lo + cast(width * 0.35 as bigint)
                  end end as s_start,
        case slot when 0 then root_end_ns when 1 then start_ns + queue_ns when 2 then agent_hi
             else case when attempt = 1 then slot_lo + cast(width * 0.95 as bigint)
                       when retried then slot_lo + cast(width * 0.3 as bigint)
                       when step = fail_step and plan = 'budget_exhausted' then agent_hi
                       else slot_lo + cast(width * (0.6 + 0.35 * u_s) as bigint) end end as s_end,
        -- errors: the first of two attempts; the failing step of failed/budget_exhausted
        case when slot = 0 then plan in ('failed', 'budget_exhausted', 'rejected')
             when step is null then false
             when step = fail_step and plan in ('failed', 'budget_exhausted') then true
             when attempt = 0 and retried then true
             else false end as err,
        case when slot = 0 then case plan when 'rejected' then 'rejected'
                                          when 'budget_exhausted' then 'budget_exhausted'
                                          when 'failed' then 'server_error' end
             when step is null then null
             when step = fail_step and plan in ('failed', 'budget_exhausted') then fail_reason
             when attempt = 0 and retried and step = fail_step then fail_reason
             when attempt = 0 and retried then
                  case when step % 2 = 0 then 'rate_limited' else 'timeout' end end as etype,
        case when step is null then null when step % 2 = 0 then
             case when plan = 'degraded' and step = fail_step and attempt = 1 then 'gpt-4o-mini'
                  else model end end as s_model,
        case when step % 2 = 1 then {tools}[1 + (hash(i, 300 + step) % 6)::bigint] end as s_tool,
        printf('%016x', hash(i, 400 + slot)) as span_id
    from timed
)
select
    trace_id,
    span_id,
    case when slot = 0 then null when slot <= 2 then printf('%016x', hash(i, 400))
         else printf('%016x', hash(i, 402)) end as parent_span_id,
    task_id,
    case slot when 0 then 'POST /v1/agents/run' when 1 then 'queue wait'
              when 2 then 'invoke_agent planner'
              else case when call_kind = 'model' then 'chat ' || s_model
                        else 'execute_tool ' || s_tool end end as name,
    case slot when 0 then 'server' when 1 then 'consumer' when 2 then 'internal'
              else 'client' end as span_kind,
    case when slot <= 1 then 'gateway' when call_kind = 'tool' then 'tool-runner'
         else 'agent-runtime' end as service_name,
    s_start as start_ns,
    s_end as end_ns,
    (s_end - s_start) / 1e6 as duration_ms,
    case when err then 'error' when slot = 0 then 'ok' else 'unset' end as status_code,
    case when not err then null when etype = 'timeout' then 'deadline exceeded'
         when etype = 'rate_limited' then '429 Too Many Requests'
         else etype end as status_message,
    case slot when 0 then 'gateway' when 1 then 'queue' when 2 then 'agent'
              else call_kind end as hop_kind,
    case slot when 0 then 'POST /v1/agents/run' when 1 then 'tasks' when 2 then 'planner'
              else coalesce(s_model, s_tool) end as hop_name,
    case when slot = 2 then 'invoke_agent' when call_kind = 'model' then 'chat'
         when call_kind = 'tool' then 'execute_tool' end as operation,
    s_model as model,
    s_tool as tool,
    case when slot >= 2 then 'planner' end as agent,
    case when slot = 0 then task_type end as task_type,
    case when slot = 0 then tenant_id end as tenant_id,
    case when slot = 0 and plan in ('degraded', 'cancelled') then plan end as task_outcome,
    case when slot = 0 then case plan when 'rejected' then 429 when 'failed' then
              case when u_reason < 0.3 then 200 else 500 end
              when 'budget_exhausted' then 504 when 'cancelled' then 499 else 200 end
         when call_kind = 'model' and etype = 'rate_limited' then 429
         when call_kind = 'model' then 200 end as http_status,
    etype as error_type,
    err as is_error,
    case slot when 0 then coalesce(budget_ms, 0) when 1 then 0 when 2 then 0
              else case when call_kind = 'model' then 30000 else 10000 end end::double
        as hop_timeout_ms,
    case when slot = 0 then budget_ms end as budget_total_ms,
    case when slot > 0 and budget_ms is not null
         then budget_ms - (s_start - start_ns) / 1e6 end as budget_remaining_ms,
    case when slot = 0 and plan = 'budget_exhausted' then true end as budget_exhausted,
    case when step is not null then attempt end as retry_attempt,
    case when step is not null then 2 end as retry_max,
    case when plan = 'degraded' and step = fail_step and attempt = 1 then true end as fallback_used,
    case when plan = 'degraded' and step = fail_step and attempt = 1 then 'backup_model' end
        as fallback_kind,
    case when plan = 'degraded' and step = fail_step and attempt = 1 then model end
        as fallback_from,
    case when plan = 'degraded' and step = fail_step and attempt = 1 then 'gpt-4o-mini' end
        as fallback_to,
    null::varchar as circuit_state,
    case when s_tool = 'send_email' then task_id || '-' || step end as idempotency_key,
    case when slot = 2 then 12 end as loop_limit,
    case when call_kind = 'model' then 400 + hash(i, 500 + slot) % 6000 + 700 * step end
        as input_tokens,
    case when call_kind = 'model' and not err then 40 + hash(i, 600 + slot) % 900 end
        as output_tokens,
    case when call_kind = 'model' and not err then 150 + (hash(i, 700 + slot) % 1200)::double end
        as ttft_ms,
    case slot
        when 0 then '{{"task.id":"' || task_id || '","task.type":"' || task_type
            || '","tenant.id":"' || tenant_id || '","hop.kind":"gateway","http.request.method":'
            || '"POST","url.path":"/v1/agents/run","http.response.status_code":' || http_status
            || coalesce(',"budget.total_ms":' || budget_ms, '')
            || ',"user_agent.original":"agent-sdk/2.3.1 python/3.12"}}'
        when 1 then '{{"messaging.system":"redis","messaging.destination.name":"tasks",'
            || '"messaging.operation.type":"receive"}}'
        when 2 then '{{"gen_ai.operation.name":"invoke_agent","gen_ai.agent.name":"planner",'
            || '"agent.loop.limit":12}}'
        else case when call_kind = 'model' then
            '{{"gen_ai.operation.name":"chat","gen_ai.provider.name":"'
            || case when s_model like 'gpt%' then 'openai' when s_model like 'claude%'
                    then 'anthropic' else 'gcp.gemini' end
            || '","gen_ai.request.model":"' || s_model || '","gen_ai.usage.input_tokens":'
            || input_tokens || coalesce(',"gen_ai.usage.output_tokens":' || output_tokens, '')
            || ',"hop.timeout_ms":30000,"retry.attempt":' || attempt
            || ',"retry.max":2,"server.address":"api.example.com"'
            || coalesce(',"error.type":"' || etype || '"', '') || '}}'
        else '{{"gen_ai.operation.name":"execute_tool","gen_ai.tool.name":"' || s_tool
            || '","gen_ai.tool.call.id":"call_' || span_id || '","hop.timeout_ms":10000,'
            || '"retry.attempt":' || attempt || coalesce(',"error.type":"' || etype || '"', '')
            || '}}' end
    end as attributes,
    case when slot <= 1 then '{{"service.name":"gateway","deployment.environment":"prod"}}'
         when call_kind = 'tool' then '{{"service.name":"tool-runner","deployment.environment":"prod"}}'
         else '{{"service.name":"agent-runtime","deployment.environment":"prod"}}' end
        as resource,
    'agentsla.bench' as scope,
    case when err then '[{{"name":"exception","attributes":{{"exception.type":"'
                       || coalesce(etype, 'error') || '"}}}}]' else '[]' end as events,
    '[]' as links,
    s_end + 200000000 + cast(u_s * 1800000000 as bigint) as received_ns,
    null::boolean as parent_remote,
    -- the logical call as materialization numbers it: a retry continues its first attempt's
    -- call; a degraded task's backup model is another hop, a call of its own
    case when attempt = 1 and not (plan = 'degraded' and step = fail_step and step % 2 = 0)
         then printf('%016x', hash(i, 400 + slot - 1)) else span_id end as call_id,
    coalesce(attempt, 0) as attempt
from spans
where s_end <= $now_ns
""".format(tools=_TOOLS)

#: Task rows of the chunk, aggregated from its spans; in progress when the root has not ended.
_TASK_ROWS_SQL = """
with agg as (
    select task_id,
        count(*) as span_count,
        count(*) filter (where hop_kind = 'model') as model_calls,
        count(*) filter (where hop_kind = 'tool') as tool_calls,
        count(*) filter (where retry_attempt > 0) as retries,
        coalesce(sum(input_tokens), 0) as input_tokens,
        coalesce(sum(output_tokens), 0) as output_tokens,
        min(received_ns) as first_seen_ns,
        max(received_ns) as last_seen_ns,
        bool_or(parent_span_id is null) as has_root
    from gen_span
    group by task_id
),
judged as (
    select g.*, a.* exclude (task_id),
        case when g.plan = 'lost'
             then g.start_ns + cast(coalesce(g.budget_ms, 300000) * 1e6 as bigint) + 60 * {ns}::bigint
             else g.root_end_ns end as final_ns
    from gen_task g join agg a using (task_id)
),
decided as (
    select *, final_ns <= $now_ns as done from judged
)
select
    task_id, trace_id,
    case when has_root then printf('%016x', hash(i, 400)) end as root_span_id,
    case when has_root then 'POST /v1/agents/run' end as root_name,
    task_type, tenant_id, 'gateway' as service_name, case when plan <> 'rejected' then 'planner' end
        as agent,
    start_ns,
    case when done then final_ns end as end_ns,
    case when done then (final_ns - start_ns) / 1e6 end as duration_ms,
    case when done then plan else 'in_progress' end as outcome,
    done as finished,
    case when done and has_root then case plan when 'rejected' then 429 when 'failed' then
         case when u_reason < 0.3 then 200 else 500 end when 'budget_exhausted' then 504
         when 'cancelled' then 499 else 200 end end as http_status,
    case when done and has_root then plan in ('success', 'degraded', 'cancelled')
         or (plan = 'failed' and u_reason < 0.3) end as gateway_ok,
    case when done then case plan when 'rejected' then 'rejected'
         when 'budget_exhausted' then 'budget_exhausted' when 'failed' then 'server_error'
         end end as error_type,
    budget_ms as budget_total_ms,
    case when done then (final_ns - start_ns) / 1e6 / budget_ms end as budget_used_ratio,
    done and plan = 'budget_exhausted' as budget_exhausted,
    done and plan = 'degraded' as fallback_used,
    case when done and plan = 'degraded' then 'backup_model' end as fallback_kind,
    span_count, model_calls, tool_calls, retries, input_tokens, output_tokens,
    case when done and plan = 'rejected' then 'gateway'
         when done and plan in ('failed', 'degraded', 'budget_exhausted') then fail_kind end
        as ffh_kind,
    case when done and plan = 'rejected' then 'POST /v1/agents/run'
         when done and plan = 'degraded' then 'gpt-4o-mini'  -- the fallback that served
         when done and plan in ('failed', 'budget_exhausted') then
         case when fail_kind = 'model' then model
              else {tools}[1 + (hash(i, 300 + fail_step) % 6)::bigint] end end as ffh_name,
    case when done and plan = 'rejected' then 'rejected'
         when done and plan = 'degraded' then 'backup_model'
         when done and plan in ('failed', 'budget_exhausted') then fail_reason end
        as ffh_reason,
    case when done and plan = 'rejected' then printf('%016x', hash(i, 400))
         when done and plan = 'degraded' then printf('%016x', hash(i, 404 + 2 * fail_step))
         when done and plan in ('failed', 'budget_exhausted')
         then printf('%016x', hash(i, 403 + 2 * fail_step)) end as ffh_span_id,
    null::varchar as ffh_detail_span_id,
    first_seen_ns,
    greatest(last_seen_ns, case when done then final_ns end) as updated_ns
from decided
order by first_seen_ns
""".format(tools=_TOOLS, ns=NS)


def generate(db_path: Path, spans: int, now_ns: int, log=print) -> dict:
    """Create the database file with about `spans` spans of tasks started in the last 24 h."""
    tasks = max(1, round(spans / SPANS_PER_TASK))
    con = open_store(db_path)
    span_cols = ", ".join(SPAN_COLUMN_NAMES)
    # self times are computed from the stored spans afterwards (fill_self_times)
    task_cols = ", ".join(c for c in TASK_COLUMN_NAMES if c != "self_times")
    # tasks start evenly over [now - 24h, now - 1 min) so the last ones are still running
    t0 = now_ns - DAY_NS
    spacing = (DAY_NS - 60 * NS) // tasks
    started = time.perf_counter()
    for lo in range(0, tasks, CHUNK_TASKS):
        hi = min(tasks, lo + CHUNK_TASKS)
        params = {"lo": lo, "hi": hi, "first": 0, "t0": t0, "spacing": spacing}
        con.execute(_TASKS_SQL, params)
        con.execute(_SPANS_SQL, {"now_ns": now_ns})
        con.execute("begin transaction")
        con.execute(f"insert into span_store select {span_cols} from gen_span order by received_ns")
        con.execute(f"insert into task_store ({task_cols}) select {task_cols} "
                    f"from ({_TASK_ROWS_SQL})",
                    {"now_ns": now_ns})
        con.execute("insert into trace_task select trace_id, task_id from gen_task")
        con.execute("commit")
        log(f"  tasks {hi:>9,}/{tasks:,}  {time.perf_counter() - started:6.1f} s")
    con.execute("drop table gen_span")
    con.execute("drop table gen_task")
    # the rows went in behind the writer's back: compute the tasks' self times from their spans
    # and build the rollups, as migrations 5 and 3 would
    built = time.perf_counter()
    fill_self_times(con, progress=lambda n, total: log(f"  self times {n:,}/{total:,}"))
    rollups.rebuild(con, progress=lambda table, n, total: log(f"  rollups {table} {n}/{total}"))
    rollups_s = time.perf_counter() - built
    con.execute("checkpoint")
    counts = con.execute("select (select count(*) from span_store), (select count(*) from task_store)"
                         ).fetchone()
    outcomes = dict(con.execute("select outcome, count(*) from task_store group by all").fetchall())
    con.close()
    return {"spans": counts[0], "tasks": counts[1], "outcomes": outcomes,
            "generate_s": round(time.perf_counter() - started, 1),
            "rollups_build_s": round(rollups_s, 1),
            "db_mib": round(db_path.stat().st_size / 2**20)}


# --- timing --------------------------------------------------------------------------------------

ROUTES = [
    ("sla", "/api/v1/sla", {"window": "24h"}),
    ("root_causes", "/api/v1/root-causes", {"window": "24h"}),
    ("hops", "/api/v1/hops", {"window": "24h"}),
    ("overview", "", {}),  # the three above one after the other, before the heavy routes
    ("budget", "/api/v1/budget", {"window": "1h"}),
    ("slo", "/api/v1/slo", {}),
    ("tasks_1h", "/api/v1/tasks", {"window": "1h"}),
    ("task", "/api/v1/tasks/{id}", {}),
    ("trace", "/api/v1/traces/{id}", {}),
    ("metrics", "/metrics", {}),
    ("findings_1h", "/api/v1/findings", {"window": "1h"}),
    ("findings_24h", "/api/v1/findings", {"window": "24h"}),
]
OVERVIEW = ("sla", "root_causes", "hops")


def _sample_ids(db_path: Path, n: int, seed: int) -> list[tuple[str, str]]:
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        total = con.execute("select count(*) from task_store").fetchone()[0]
        rng = random.Random(seed)
        picks = sorted(rng.sample(range(total), min(n, total)))
        rows = con.execute("select task_id, trace_id from (select task_id, trace_id, row_number() "
                           "over () - 1 as k from task_store) where k in (select unnest($k))",
                           {"k": picks}).fetchall()
    finally:
        con.close()
    rng.shuffle(rows)
    return rows


def _data_end_s(db_path: Path) -> float:
    """The newest span end of the file, unix seconds: the routes' windows end there (a file
    reused hours after it was made would otherwise be timed over a partly empty window)."""
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        return (con.execute("select max(end_ns) from span_store").fetchone()[0] or 0) / NS + 1
    finally:
        con.close()


def _ending_at(params: dict, end_s: float) -> dict:
    """A route's `window=` as the same span of time ending at end_s (`from`/`to`)."""
    if "window" not in params:
        return params
    rest = {k: v for k, v in params.items() if k != "window"}
    span_s = parse_span("window", params["window"]) / NS
    return {**rest, "from": f"{end_s - span_s:.3f}", "to": f"{end_s:.3f}"}


def _drain(stream, keep: list[str]) -> None:
    # the server's stdout is a pipe: read it, or a chatty server blocks once it is full
    for line in stream:
        keep.append(line)
        del keep[:-200]


def _time(client: httpx.Client, path: str, params: dict) -> tuple[float, int, int]:
    started = time.perf_counter()
    response = client.get(path, params=params)
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise RuntimeError(f"{path} answered {response.status_code}: {response.text[:300]}")
    return elapsed, response.status_code, len(response.content)


def _time_overview(client: httpx.Client, repeat: int, results: dict, data_end: float) -> None:
    """Time the overview's three routes called one after the other (when none was skipped)."""
    if not all(n in results for n in OVERVIEW):
        return
    overview = []
    for _ in range(repeat):
        started = time.perf_counter()
        for name, path, params in ROUTES:
            if name in OVERVIEW:
                _time(client, path, _ending_at(params, data_end))
        overview.append((time.perf_counter() - started) * 1000)
    results["overview"] = {"cold_ms": round(sum(results[n]["cold_ms"] for n in OVERVIEW), 1),
                           "median_ms": round(statistics.median(overview), 1),
                           "p95_ms": round(_pct(overview, 0.95), 1),
                           "min_ms": round(min(overview), 1),
                           "max_ms": round(max(overview), 1), "bytes": 0}


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


class ApiOnlyServer(ServerProcess):
    """The query API alone (no receivers, no writer) on the file, over loopback (--server api)."""

    def start(self, timeout: float = 30.0) -> "ApiOnlyServer":
        args = [sys.executable, __file__, "--serve-api", str(self.data_dir), str(self.api_port)]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"API server exited: {self.proc.stdout.read()}")
            try:
                if httpx.get(f"{self.api_url}/api/v1/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.kill()
        raise TimeoutError("API server did not become healthy")


def serve_api(data_dir: Path, port: int) -> None:
    """Serve create_api_app over the file on 127.0.0.1:port, as `agentsla serve` wires it."""
    import uvicorn

    from agentsla.config import load_config
    from agentsla.api.app import create_api_app
    from agentsla.queries.engines.duckdb import cursor_stores

    con = open_store(data_dir / "agentsla.duckdb")
    app = create_api_app(cursor_stores(con), load_config(), lambda: {})
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def time_routes(data_dir: Path, repeat: int, seed: int, kind: str = "serve",
                skip: tuple[str, ...] = ()) -> dict:
    """Start a server on data_dir and time every route: cold first call, then `repeat` warm."""
    ids = _sample_ids(data_dir / "agentsla.duckdb", 2 * repeat + 2, seed)
    data_end = _data_end_s(data_dir / "agentsla.duckdb")
    if kind == "serve":
        server = ServerProcess(data_dir, env={"AGENTSLA_LOST_GRACE": "7d"})
    else:
        server = ApiOnlyServer(data_dir)
    started = time.perf_counter()
    server.start(timeout=300)
    startup_s = time.perf_counter() - started
    log_lines: list[str] = []
    threading.Thread(target=_drain, args=(server.proc.stdout, log_lines), daemon=True).start()
    results: dict[str, dict] = {}
    try:
        with httpx.Client(base_url=server.api_url, timeout=600) as client:
            evidence_s = server.wait_for_evidence()
            id_iter = iter(ids)
            for name, path, params in ROUTES:
                if name in skip:
                    continue
                if name == "overview":
                    _time_overview(client, repeat, results, data_end)
                    continue
                times, size = [], 0
                for _ in range(repeat + 1):
                    real = path
                    if "{id}" in path:
                        task_id, trace_id = next(id_iter) if name == "task" else ids[len(times)]
                        real = path.replace("{id}", task_id if name == "task" else trace_id)
                    ms, _, size = _time(client, real, _ending_at(params, data_end))
                    times.append(ms)
                warm = times[1:]
                results[name] = {"cold_ms": round(times[0], 1),
                                 "median_ms": round(statistics.median(warm), 1),
                                 "p95_ms": round(_pct(warm, 0.95), 1),
                                 "min_ms": round(min(warm), 1), "max_ms": round(max(warm), 1),
                                 "bytes": size}
    finally:
        server.stop()
    return {"server": kind, "server_startup_s": round(startup_s, 2),
            "evidence_backfill_s": evidence_s, "routes": results}


# --- the machine and the report ------------------------------------------------------------------

def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kib / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return (f"{cpu}, {len(os.sched_getaffinity(0))} cores{mem}, Linux {platform.release()}, "
            f"Python {platform.python_version()}, DuckDB {duckdb.__version__}")


def main() -> None:
    """Build (or reuse) the file, time the routes, print a table and one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=10, help="warm calls per route")
    parser.add_argument("--data-dir", type=Path, help="where agentsla.duckdb goes (default: temp)")
    parser.add_argument("--keep", action="store_true", help="keep the data dir afterwards")
    parser.add_argument("--reuse", action="store_true",
                        help="time an existing --data-dir without regenerating it")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--skip", action="append", default=[], metavar="ROUTE",
                        help="leave a route out (repeat), e.g. --skip budget")
    parser.add_argument("--server", choices=("serve", "api"), default="serve",
                        help="serve: the real `agentsla serve`; api: the query API alone "
                             "(create_api_app under uvicorn, no ingest pipeline)")
    parser.add_argument("--serve-api", nargs=2, metavar=("DATA_DIR", "PORT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_api:
        serve_api(Path(args.serve_api[0]), int(args.serve_api[1]))
        return
    if args.repeat < 1 or args.spans < 1:
        parser.error("--spans and --repeat must be positive")
    if args.reuse and args.data_dir is None:
        parser.error("--reuse needs --data-dir")
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="agentsla-qbench-"))
    db_path = data_dir / "agentsla.duckdb"
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    try:
        if args.reuse:
            con = duckdb.connect(str(db_path), read_only=True)
            spans, tasks = con.execute("select (select count(*) from span_store), "
                                       "(select count(*) from task_store)").fetchone()
            con.close()
            data = {"spans": spans, "tasks": tasks, "reused": True,
                    "db_mib": round(db_path.stat().st_size / 2**20)}
        else:
            if db_path.exists():
                parser.error(f"{db_path} exists; pass --reuse to time it, or another --data-dir")
            data_dir.mkdir(parents=True, exist_ok=True)
            log(f"generating ~{args.spans:,} spans into {db_path}")
            data = generate(db_path, args.spans, time.time_ns(), log)
        log(f"data: {data}")
        timing = time_routes(data_dir, args.repeat, args.seed, args.server, tuple(args.skip))
    finally:
        if not args.keep and not args.reuse:
            shutil.rmtree(data_dir, ignore_errors=True)
    result = {"machine": machine(), "date": time.strftime("%Y-%m-%d"), "repeat": args.repeat,
              "data": data, **timing}
    print(f"{'route':<12} {'cold ms':>9} {'median ms':>10} {'p95 ms':>9} {'max ms':>9} {'bytes':>9}")
    for name, r in timing["routes"].items():
        print(f"{name:<12} {r['cold_ms']:>9.1f} {r['median_ms']:>10.1f} {r['p95_ms']:>9.1f} "
              f"{r['max_ms']:>9.1f} {r['bytes']:>9}")
    print(json.dumps(result, separators=(",", ":")))


if __name__ == "__main__":
    main()
