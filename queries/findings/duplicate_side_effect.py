"""Duplicate side effect: one idempotency key executed successfully more than once by a hop.

Every successful execution of a key that had one ending in the window is counted, also those
before the window, so a duplicate straddling the window's start is still found.
"""

from __future__ import annotations

from agentsla.queries.findings._finding import hop_label, make_finding, run_question

TYPE = "duplicate_side_effect"

_DUPLICATE_EXECUTIONS_SQL = """
with recent_keys as (
    select distinct hop_kind, hop_name, idempotency_key
    from spans
    where end_ns >= $start_ns and end_ns < $end_ns
      and idempotency_key is not null and not coalesce(is_error, false)
),
executions as (
    select s.task_id, s.span_id, s.hop_kind, s.hop_name, s.idempotency_key, s.end_ns
    from spans s
    semi join recent_keys k on k.idempotency_key = s.idempotency_key
                           and k.hop_kind is not distinct from s.hop_kind
                           and k.hop_name is not distinct from s.hop_name
    where not coalesce(s.is_error, false)
),
duplicated as (
    select
        hop_kind, hop_name, idempotency_key,
        count(*) as executions,
        count(distinct task_id) as tasks,
        list({'task_id': task_id, 'span_id': span_id} order by end_ns) as runs,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from executions
    group by hop_kind, hop_name, idempotency_key
    having count(*) > 1
)
select
    hop_kind, hop_name,
    count(*) as duplicated_keys,
    sum(executions - 1) as extra_executions,
    max(executions) as max_executions,
    count(*) filter (where tasks > 1) as keys_across_tasks,
    flatten(list(runs order by executions desc))[1:5] as examples,
    min(first_ns) as first_ns,
    max(last_ns) as last_ns
from duplicated
group by hop_kind, hop_name
order by extra_executions desc
"""


def duplicate_executions(cur, params) -> list[dict]:
    """Answer: which hops executed one idempotency key successfully more than once?

    Columns: hop_kind, hop_name, duplicated_keys, extra_executions, max_executions,
    keys_across_tasks, examples, first_ns, last_ns.
    """
    return run_question(cur, _DUPLICATE_EXECUTIONS_SQL, params)


def detect(cur, params, th) -> list[dict]:
    """Find side effects that ran twice despite an idempotency key."""
    found = []
    for row in duplicate_executions(cur, params):
        hint = (f"{hop_label(row)} executed {row['duplicated_keys']} idempotency key(s) "
                f"successfully more than once ({row['extra_executions']} extra, up to "
                f"{row['max_executions']}×): store each key with its result and return the stored "
                f"result on a repeat, and do not retry after a timeout without checking the key")
        found.append(make_finding(TYPE, "key_executed_twice", row, "critical", hint))
    return found
