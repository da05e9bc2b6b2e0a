-- snippet: evidence of findings/polling_loops for the poll loops whose parent ended in
-- [$lo_ns, $hi_ns), per minute of that end, hop and polled name (label): counts, each loop's
-- numbers the verdict takes medians of, and each task's lateness summed over the minute's
-- loops (task_ids with vals task_late_ms, one order; tasks whose job was never found left
-- out), which the verdict adds up per task. The spans around a loop (what the polls did, the
-- job) are read among those that started or ended in [$reach_ns, $reach_end_ns). Which loops
-- count depends on thresholds (the stored evidence is named with them:
-- queries.findings.evidence.question_id).
with {{poll_loops}},
loop_polls as (
    select p.trace_id, p.span_id
    from polls p
    semi join poll_loops l on l.trace_id = p.trace_id and l.parent_span_id = p.parent_span_id
                          and l.poll_name = p.poll_name
),
under_polls as (
    -- what the polls did (their HTTP client spans, two levels down) is never the awaited job
    select c.trace_id, c.span_id
    from poll_family c
    semi join loop_polls p on p.trace_id = c.trace_id and p.span_id = c.parent_span_id
),
not_the_job as (
    select trace_id, span_id from loop_polls
    union all select trace_id, span_id from under_polls
    union all
    select c.trace_id, c.span_id
    from poll_family c
    semi join under_polls u on u.trace_id = c.trace_id and u.span_id = c.parent_span_id
),
jobs as (
    -- the awaited job: the trace's span that ended last while the loop polled, before the
    -- poll that saw it ended (not a poll, nothing a poll did, no sleep between polls)
    select l.trace_id, l.parent_span_id, l.poll_name, max(s.end_ns) as job_end_ns
    from poll_loops l
    join spans s on s.trace_id = l.trace_id
                and s.end_ns > l.first_poll_ns and s.end_ns < l.seen_ns
    anti join not_the_job n on n.trace_id = s.trace_id and n.span_id = s.span_id
    where s.end_ns >= $reach_ns and s.end_ns < $reach_end_ns
      and s.span_id <> l.parent_span_id
      and not (s.parent_span_id = l.parent_span_id and s.start_ns > l.first_poll_ns)
    group by l.trace_id, l.parent_span_id, l.poll_name
),
per_loop as (
    select
        p.task_id, p.span_id, p.hop_kind, p.hop_name, p.end_ns, l.poll_name, l.polls,
        l.interval_ms, l.interval_cv,
        (l.seen_ns - j.job_end_ns) / 1e6 as late_ms,
        (l.seen_ns - j.job_end_ns) / 1e6 / nullif(p.duration_ms, 0) as late_share,
        p.end_ns // $grain_ns * $grain_ns as minute_ns
    from poll_loops l
    join poll_parents p on p.trace_id = l.trace_id and p.span_id = l.parent_span_id
    left join jobs j on j.trace_id = l.trace_id and j.parent_span_id = l.parent_span_id
                    and j.poll_name = l.poll_name
),
per_task as (
    -- a task may wait on several polls of the same hop: its lateness adds up
    select minute_ns, hop_kind, hop_name, poll_name,
           list(task_id order by task_id) as task_ids,
           list(late_ms order by task_id) as task_late_ms
    from (select minute_ns, hop_kind, hop_name, poll_name, task_id, sum(late_ms) as late_ms
          from per_loop
          where late_ms is not null
          group by all)
    group by all
),
by_hop as (
    select
        minute_ns, hop_kind, hop_name, poll_name,
        map {'loops': count(*), 'loops_with_job': count(late_ms), 'max_late_ms': max(late_ms),
             'late_ms': sum(late_ms)}::MAP(VARCHAR, DOUBLE) as n,
        map {'polls': list(polls), 'interval_ms': list(interval_ms),
             'interval_cv': list(interval_cv), 'late_ms': list(late_ms),
             'late_share': list(late_share)}::MAP(VARCHAR, DOUBLE[]) as vals,
        arg_max({'task_id': task_id, 'span_id': span_id, 'rank': coalesce(late_ms, 0)},
                {'r': coalesce(late_ms, 0), 't': task_id, 's': span_id}, 5) as examples,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from per_loop
    group by all
)
select
    b.minute_ns, b.hop_kind, b.hop_name, b.poll_name as label, b.examples, b.first_ns, b.last_ns,
    b.n, map_concat(b.vals, map {'task_late_ms': coalesce(t.task_late_ms, [])})
        ::MAP(VARCHAR, DOUBLE[]) as vals,
    t.task_ids
from by_hop b
left join per_task t on t.minute_ns = b.minute_ns
                    and t.hop_kind is not distinct from b.hop_kind
                    and t.hop_name is not distinct from b.hop_name and t.poll_name = b.poll_name
