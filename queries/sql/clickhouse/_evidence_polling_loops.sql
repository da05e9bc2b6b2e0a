-- snippet: evidence of findings/polling_loops for the poll loops whose parent ended in
-- [lo_ns, hi_ns), per minute of that end, hop and polled name (label): counts, each loop's
-- numbers the verdict takes medians of (how late it saw the job it waited for: none when the
-- job is not in the trace), and each task's lateness summed over the minute's loops
-- (task_ids with vals task_late_ms, one order), which the verdict adds up per task; DuckDB's
-- twin. The spans around a loop (what the polls did, the job) are read among those that ended
-- in [reach_ns, reach_end_ns). Which loops count depends on thresholds (the stored evidence
-- is named with them: queries.findings.evidence.question_id).
with {{poll_loops}},
loop_polls as (
    select trace_id, span_id
    from polls
    where (trace_id, parent_span_id, poll_name) in (
        select trace_id, parent_span_id, poll_name from poll_loops)
),
not_the_job as (
    -- a loop's polls and what they did (their HTTP client spans, one and two levels down) are
    -- never the awaited job: the family's spans whose own, parent's or parent's parent's id is
    -- a loop poll's (one reference of loop_polls: ClickHouse analyses a CTE again at each)
    select trace_id, span_id
    from (select f.trace_id as trace_id, f.span_id as span_id,
                 [f.span_id, f.parent_span_id, up.parent_span_id] as line
          from poll_family as f
          left join poll_family as up on up.trace_id = f.trace_id
                                     and up.span_id = f.parent_span_id)
    array join line as ancestor_id
    where (trace_id, ancestor_id) in (select trace_id, span_id from loop_polls)
),
jobs as (
    -- the awaited job: the trace's span that ended last while the loop polled, before the
    -- poll that saw it ended (not a poll, nothing a poll did, no sleep between polls)
    select l.trace_id as trace_id, l.parent_span_id as parent_span_id,
           l.poll_name as poll_name, max(s.end_ns) as job_end_ns
    from poll_loops as l
    inner join {{finding_spans}} as s on s.trace_id = l.trace_id
    where s.trace_id in (select trace_id from poll_loops)
      and s.end_ns > l.first_poll_ns and s.end_ns < l.seen_ns
      and (s.trace_id, s.span_id) not in (select trace_id, span_id from not_the_job)
      and s.end_ns >= {reach_ns:Int64} and s.end_ns < {reach_end_ns:Int64}
      and s.span_id != l.parent_span_id
      -- a sibling started after the first poll is a sleep between polls (DuckDB's null
      -- logic: a root started then is left out too)
      and not (s.start_ns > l.first_poll_ns
               and coalesce(s.parent_span_id = l.parent_span_id, true))
    group by l.trace_id, l.parent_span_id, l.poll_name
),
per_loop as (
    select
        p.task_id as task_id, p.span_id as span_id, p.hop_kind as hop_kind,
        p.hop_name as hop_name, p.end_ns as end_ns, l.poll_name as poll_name, l.polls as polls,
        l.interval_ms as interval_ms, l.interval_cv as interval_cv,
        (l.seen_ns - j.job_end_ns) / 1e6 as late_ms,
        (l.seen_ns - j.job_end_ns) / 1e6 / nullIf(p.duration_ms, 0) as late_share
    from poll_loops as l
    inner join poll_parents as p on p.trace_id = l.trace_id and p.span_id = l.parent_span_id
    left join jobs as j on j.trace_id = l.trace_id and j.parent_span_id = l.parent_span_id
                       and j.poll_name = l.poll_name
)
select * except task_late
from (
    select
        intDiv(end_ns, 60000000000) * 60000000000 as minute_ns,
        hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type, poll_name as label,
        map('loops', toFloat64(count()), 'loops_with_job', toFloat64(count(late_ms)),
            'max_late_ms', max(late_ms), 'late_ms', sum(late_ms)) as n,
        -- a task may wait on several polls of the same hop: its lateness adds up
        sumMapIf(map(task_id, assumeNotNull(late_ms)), late_ms is not null) as task_late,
        mapKeys(task_late) as task_ids,
        map('polls', groupArray(toFloat64(polls)), 'interval_ms', groupArray(interval_ms),
            'interval_cv', groupArray(interval_cv), 'late_ms', groupArray(late_ms),
            'late_share', groupArray(late_share), 'task_late_ms', mapValues(task_late)) as vals,
        arraySlice(arrayReverseSort(groupArray((coalesce(late_ms, 0), task_id, span_id))), 1, 5)
            as examples,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from per_loop
    group by minute_ns, hop_kind, hop_name, poll_name
)
settings join_use_nulls = 1
