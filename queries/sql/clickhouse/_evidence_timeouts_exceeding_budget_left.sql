-- snippet: evidence of findings/timeouts_exceeding_budget_left for the calls with a timeout
-- that ended in [lo_ns, hi_ns), per minute of that end and hop (DuckDB's twin); parents,
-- roots and tasks are read among those that started from reach_ns (a task's spans start
-- within 30 min of it). The minute's call that overshot most is its first example, its
-- arithmetic in n and its tightest limit in label; what the inverted calls had left as
-- histogram buckets (vals left_bucket/_count).
with timed_calls as (
    select trace_id, span_id, assumeNotNull(parent_span_id) as parent_span_id, task_id,
           hop_kind, hop_name, start_ns, end_ns, hop_timeout_ms, retry_max,
           coalesce(attempt, retry_attempt, 0) as nth,  -- retry_attempt: not materialized yet
           budget_remaining_ms
    from {{finding_spans}}
    where end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
      and hop_timeout_ms > 0
      and parent_span_id is not null
),
timed_tasks as (
    select task_id, trace_id, root_span_id, budget_total_ms, start_ns, outcome
    from {{finding_tasks}}
    where task_id in (select task_id from timed_calls)
      and start_ns >= {reach_ns:Int64} and start_ns < {hi_ns:Int64}
),
around as (
    -- the spans of those calls' traces and tasks' traces (their parents and roots)
    select trace_id, span_id, start_ns, hop_timeout_ms, hop_name, budget_remaining_ms
    from {{finding_spans}}
    where (trace_id in (select trace_id from timed_calls)
           or trace_id in (select trace_id from timed_tasks))
      and start_ns >= {reach_ns:Int64} and start_ns < {hi_ns:Int64}
),
wanted as (
    -- each call with its task, and the two spans it is judged against: its parent and its
    -- task's root, looked up in one read of `around` (ClickHouse analyses a CTE again at
    -- each reference: docs/architecture.md)
    select c.trace_id as trace_id, c.span_id as span_id, any(c.task_id) as task_id,
           any(c.hop_kind) as hop_kind, any(c.hop_name) as hop_name, any(c.end_ns) as end_ns,
           any(c.start_ns) as start_ns, any(c.hop_timeout_ms) as hop_timeout_ms,
           any(c.retry_max) as retry_max, any(c.nth) as nth,
           any(c.budget_remaining_ms) as budget_remaining_ms,
           any(t.budget_total_ms) as budget_total_ms, any(t.start_ns) as task_start_ns,
           any(t.outcome) as outcome,
           anyIf((a.start_ns, a.hop_timeout_ms, a.hop_name, a.budget_remaining_ms),
                 a.span_id is not null and w.3 = 'parent') as parent,
           anyIf((a.start_ns, a.hop_timeout_ms, a.hop_name),
                 a.span_id is not null and w.3 = 'root') as root
    from timed_calls as c
    left join timed_tasks as t on t.task_id = c.task_id
    array join [(c.trace_id, c.parent_span_id, 'parent'),
                (t.trace_id, t.root_span_id, 'root')] as w
    left join around as a on a.trace_id = w.1 and a.span_id = w.2
    group by c.trace_id, c.span_id
),
placed as (
    select
        task_id, span_id, hop_kind, hop_name, end_ns, hop_timeout_ms,
        -- attempts this call may still make, itself included
        greatest(coalesce(retry_max, 0) + 1 - nth, 1) as attempts_left,
        coalesce(
            budget_remaining_ms,
            parent.4 - (start_ns - parent.1) / 1e6,
            budget_total_ms - (start_ns - task_start_ns) / 1e6
        ) as budget_left_ms,
        if(parent.2 > 0, parent.2 - (start_ns - parent.1) / 1e6, NULL) as parent_left_ms,
        if(root.2 > 0, root.2 - (start_ns - root.1) / 1e6, NULL) as root_left_ms,
        parent.3 as parent_name, root.3 as root_name,
        outcome in ('failed', 'budget_exhausted', 'lost') as task_bad
    from wanted
),
judged as (
    select
        *,
        -- the least of the known limits (DuckDB's least() skips nulls)
        if(budget_left_ms is null and parent_left_ms is null and root_left_ms is null, NULL,
           arrayMin(arrayFilter(x -> x is not null,
                                [budget_left_ms, parent_left_ms, root_left_ms]))) as left_ms,
        hop_timeout_ms * attempts_left as worst_ms
    from placed
),
flagged as (
    select *,
           -- which limit was the tightest, for the hint
           multiIf(coalesce(left_ms = parent_left_ms, false), parent_name,
                   coalesce(left_ms = root_left_ms, false), root_name, 'the task budget')
               as bound_by,
           coalesce(left_ms > 0 and worst_ms > left_ms, false) as inverted,
           if(inverted, assumeNotNull(left_ms), 1.0) as value,  -- a log needs it positive
           (assumeNotNull(worst_ms - left_ms), task_id, span_id) as overshoot
    from judged
)
select * except left_hist
from (
    select
        intDiv(end_ns, 60000000000) * 60000000000 as minute_ns,
        hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type,
        if(countIf(inverted) > 0, argMaxIf(bound_by, overshoot, inverted), NULL) as label,
        map('calls', toFloat64(count()), 'inverted_calls', toFloat64(countIf(inverted)),
            'timeout_alone_exceeds', toFloat64(countIf(inverted and hop_timeout_ms > left_ms)),
            'timeout_ms', toFloat64(argMaxIf(hop_timeout_ms, overshoot, inverted)),
            'attempts', toFloat64(argMaxIf(attempts_left, overshoot, inverted)),
            'worst_case_ms', toFloat64(argMaxIf(worst_ms, overshoot, inverted)),
            'left_ms', toFloat64(argMaxIf(left_ms, overshoot, inverted))) as n,
        groupUniqArrayIf(task_id, inverted and coalesce(task_bad, false)) as task_ids,
        sumMapIf([toFloat64({{hist_bucket}})], [1.0], inverted) as left_hist,
        map('left_bucket', left_hist.1, 'left_count', left_hist.2) as vals,
        arraySlice(arrayReverseSort(groupArrayIf(overshoot, inverted)), 1, 5) as examples,
        minIfOrNull(end_ns, inverted) as first_ns,
        maxIfOrNull(end_ns, inverted) as last_ns
    from flagged
    group by minute_ns, hop_kind, hop_name
)
settings join_use_nulls = 1
