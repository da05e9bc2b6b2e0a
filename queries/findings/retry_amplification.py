"""Retry amplification: attempts per logical call by hop, retried timeouts, retry storms.

Attempts of one logical call are sibling spans of the same hop, as materialization numbered them
(see ATTEMPTS_CTE). A retried timeout waits the full timeout again on a dependency that just proved
slow; a storm is a minute in which most of a hop's attempts were retries.
"""

from __future__ import annotations

from agentsla.queries.findings._finding import (ATTEMPTS_CTE, dur, hop_label, make_finding, pct,
                                                run_question)

TYPE = "retry_amplification"

_ATTEMPTS_PER_CALL_SQL = f"""
with {ATTEMPTS_CTE},
calls as (
    select
        task_id, hop_kind, hop_name,
        count(*) as attempts,
        arg_max(span_id, attempt) as last_span_id,
        max(end_ns) as end_ns
    from attempts
    group by trace_id, parent_span_id, hop_kind, hop_name, call_id, task_id
)
select
    hop_kind, hop_name,
    count(*) as calls,
    sum(attempts) as attempts,
    avg(attempts) as attempts_per_call,
    max(attempts) as max_attempts,
    count(*) filter (where attempts > 1) as retried_calls,
    arg_max({{'task_id': task_id, 'span_id': last_span_id}}, attempts, 5) as examples,
    min(end_ns) filter (where attempts > 1) as first_ns,
    max(end_ns) filter (where attempts > 1) as last_ns
from calls
group by hop_kind, hop_name
having count(*) >= $retry_min_calls and avg(attempts) >= $retry_attempts_per_call
order by attempts_per_call desc
"""

_RETRIED_TIMEOUTS_SQL = f"""
with {ATTEMPTS_CTE},
sequenced as (
    select
        *,
        lead(attempt) over (
            partition by trace_id, parent_span_id, hop_kind, hop_name, call_id
            order by attempt, start_ns
        ) as next_attempt
    from attempts
),
retried as (
    -- a timed-out attempt that another attempt of the same call followed
    select *
    from sequenced
    where error_type = 'timeout' and next_attempt is not null
)
select
    hop_kind, hop_name,
    count(*) as retried_timeouts,
    count(distinct task_id) as tasks,
    max(hop_timeout_ms) as timeout_ms,
    sum(duration_ms) as time_in_retried_timeouts_ms,
    arg_max({{'task_id': task_id, 'span_id': span_id}}, duration_ms, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from retried
group by hop_kind, hop_name
having count(*) >= $retried_timeouts_min
order by retried_timeouts desc
"""

_RETRY_STORMS_SQL = f"""
with {ATTEMPTS_CTE},
minutes as (
    select
        hop_kind, hop_name,
        end_ns // 60000000000 as minute,
        count(*) as attempts,
        count(*) filter (where attempt > 0) as retries,
        arg_max({{'task_id': task_id, 'span_id': span_id}}, attempt, 5) as examples,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from attempts
    group by hop_kind, hop_name, minute
),
storms as (
    select *, retries / attempts as retry_share
    from minutes
    where retries >= $retry_storm_min_retries
      and retries >= $retry_storm_share * attempts
)
select
    hop_kind, hop_name,
    count(*) as storm_minutes,
    max(retries) as peak_retries_per_minute,
    max(retry_share) as peak_retry_share,
    sum(retries) as retries,
    arg_max(examples, retries) as examples,
    min(first_ns) as first_ns,
    max(last_ns) as last_ns
from storms
group by hop_kind, hop_name
order by peak_retries_per_minute desc
"""


def attempts_per_call(cur, params) -> list[dict]:
    """Answer: which hops average too many attempts per logical call?

    Columns: hop_kind, hop_name, calls, attempts, attempts_per_call, max_attempts,
    retried_calls, examples, first_ns, last_ns.
    """
    return run_question(cur, _ATTEMPTS_PER_CALL_SQL, params)


def retried_timeouts(cur, params) -> list[dict]:
    """Answer: which hops retried attempts that had timed out?

    Columns: hop_kind, hop_name, retried_timeouts, tasks, timeout_ms,
    time_in_retried_timeouts_ms, examples, first_ns, last_ns.
    """
    return run_question(cur, _RETRIED_TIMEOUTS_SQL, params)


def retry_storms(cur, params) -> list[dict]:
    """Answer: which hops had minutes where most attempts were retries?

    Columns: hop_kind, hop_name, storm_minutes, peak_retries_per_minute, peak_retry_share,
    retries, examples, first_ns, last_ns.
    """
    return run_question(cur, _RETRY_STORMS_SQL, params)


def detect(cur, params, th) -> list[dict]:
    """Find retry amplification of the three shapes."""
    found = []
    for row in attempts_per_call(cur, params):
        heavy = row["attempts_per_call"] >= 2 * th["retry_attempts_per_call"]
        severity = "critical" if heavy else "warning"
        hint = (f"{hop_label(row)} averages {row['attempts_per_call']:.2f} attempts per call "
                f"(max {row['max_attempts']}; {row['retried_calls']} of {row['calls']} calls "
                f"retried): each failure multiplies its load; cap retries at 1, add jittered "
                f"backoff and a circuit breaker")
        found.append(make_finding(TYPE, "attempts_per_call", row, severity, hint))
    for row in retried_timeouts(cur, params):
        hint = (f"{hop_label(row)} retried {row['retried_timeouts']} timed-out attempts "
                f"(timeout {dur(row['timeout_ms'])}, {dur(row['time_in_retried_timeouts_ms'])} "
                f"spent in them): a retry waits the full timeout again on a slow dependency; "
                f"retry connection errors only, or fail over instead")
        found.append(make_finding(TYPE, "retried_timeouts", row, "warning", hint))
    for row in retry_storms(cur, params):
        hint = (f"{hop_label(row)} had {row['storm_minutes']} retry-storm minute(s), peaking at "
                f"{row['peak_retries_per_minute']} retries/min ({pct(row['peak_retry_share'])} of "
                f"attempts): add a retry budget (e.g. retries ≤ 10 % of calls) and a circuit "
                f"breaker")
        found.append(make_finding(TYPE, "retry_storm", row, "critical", hint))
    return found
