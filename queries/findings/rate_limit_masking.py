"""Rate-limit masking: 429s absorbed by retries, so task success looks fine while latency climbs.

A logical call absorbed a 429 when one of its attempts failed with `rate_limited` and its last
attempt succeeded. Its latency is first start to last end: the price of the hidden 429s.
"""

from __future__ import annotations

from agentsla.queries.findings._finding import (ATTEMPTS_CTE, dur, hop_label, make_finding, pct,
                                                run_question)

TYPE = "rate_limit_masking"

_ABSORBED_RATE_LIMITS_SQL = f"""
with {ATTEMPTS_CTE},
calls as (
    select
        task_id, hop_kind, hop_name,
        count(*) filter (where error_type = 'rate_limited') as rate_limited,
        not arg_max(coalesce(is_error, false), attempt) as succeeded,
        (max(end_ns) - min(start_ns)) / 1e6 as latency_ms,
        arg_max(span_id, attempt) as last_span_id,
        max(end_ns) as end_ns
    from attempts
    group by trace_id, parent_span_id, hop_kind, hop_name, call_id, task_id
),
judged as (
    select *, rate_limited > 0 and succeeded as masked
    from calls
)
select
    j.hop_kind, j.hop_name,
    count(*) as calls,
    count(*) filter (where j.masked) as masked_calls,
    sum(j.rate_limited) filter (where j.masked) as absorbed_429s,
    quantile_cont(j.latency_ms, 0.99) filter (where j.masked) as masked_p99_ms,
    quantile_cont(j.latency_ms, 0.99) filter (where j.rate_limited = 0) as clean_p99_ms,
    avg(case when k.outcome in ('success', 'degraded') then 1.0 else 0.0 end)
        filter (where j.masked) as masked_task_success,
    arg_max({{'task_id': j.task_id, 'span_id': j.last_span_id}}, j.latency_ms, 5)
        filter (where j.masked) as examples,
    min(j.end_ns) filter (where j.masked) as first_ns,
    max(j.end_ns) filter (where j.masked) as last_ns
from judged j
left join tasks k on k.task_id = j.task_id
group by j.hop_kind, j.hop_name
having sum(j.rate_limited) filter (where j.masked) >= $rate_limit_min_absorbed
order by absorbed_429s desc
"""


def absorbed_rate_limits(cur, params) -> list[dict]:
    """Answer: which hops had 429s that retries absorbed, and what did it cost in latency?

    Columns: hop_kind, hop_name, calls, masked_calls, absorbed_429s, masked_p99_ms,
    clean_p99_ms, masked_task_success (share of their tasks that succeeded or degraded),
    examples, first_ns, last_ns.
    """
    return run_question(cur, _ABSORBED_RATE_LIMITS_SQL, params)


def detect(cur, params, th) -> list[dict]:
    """Find 429s hidden by retries."""
    found = []
    for row in absorbed_rate_limits(cur, params):
        masked, clean = row["masked_p99_ms"], row["clean_p99_ms"]
        climbing = masked is not None and clean and masked >= th["rate_limit_p99_ratio"] * clean
        hint = (f"{hop_label(row)} absorbed {row['absorbed_429s']} 429s in "
                f"{row['masked_calls']} of {row['calls']} calls; their tasks still succeeded "
                f"({pct(row['masked_task_success'])}) but call p99 is {dur(masked)} vs "
                f"{dur(clean)} without 429s; raise the quota or shed load, honour Retry-After, "
                f"and alert on 429 rate, not only task success")
        found.append(make_finding(TYPE, "absorbed_429s", row,
                                  "critical" if climbing else "warning", hint))
    return found
