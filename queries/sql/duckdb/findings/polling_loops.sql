-- queries.findings.wait_amplification.polling_loops: which hops poll, and how late did they see the job they waited for?
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
    from spans c
    semi join loop_polls p on p.trace_id = c.trace_id and p.span_id = c.parent_span_id
),
not_the_job as (
    select trace_id, span_id from loop_polls
    union all select trace_id, span_id from under_polls
    union all
    select c.trace_id, c.span_id
    from spans c
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
    where s.span_id <> l.parent_span_id
      and not (s.parent_span_id = l.parent_span_id and s.start_ns > l.first_poll_ns)
    group by l.trace_id, l.parent_span_id, l.poll_name
),
per_loop as (
    select
        p.task_id, p.span_id, p.hop_kind, p.hop_name, p.end_ns, l.poll_name, l.polls,
        l.interval_ms, l.interval_cv,
        (l.seen_ns - j.job_end_ns) / 1e6 as late_ms,
        (l.seen_ns - j.job_end_ns) / 1e6 / nullif(p.duration_ms, 0) as late_share
    from poll_loops l
    join poll_parents p on p.trace_id = l.trace_id and p.span_id = l.parent_span_id
    left join jobs j on j.trace_id = l.trace_id and j.parent_span_id = l.parent_span_id
                    and j.poll_name = l.poll_name
),
per_task as (
    -- a task may wait on several polls of the same hop: its lateness adds up
    select hop_kind, hop_name, poll_name, median(task_late_ms) as task_late_ms
    from (select hop_kind, hop_name, poll_name, task_id, sum(late_ms) as task_late_ms
          from per_loop
          group by hop_kind, hop_name, poll_name, task_id)
    group by hop_kind, hop_name, poll_name
),
by_hop as (
    select
        hop_kind, hop_name, poll_name,
        count(*) as loops,
        median(polls) as polls_per_loop,
        median(interval_ms) as interval_ms,
        median(interval_cv) as interval_cv,
        count(late_ms) as loops_with_job,
        median(late_ms) as late_ms,
        max(late_ms) as max_late_ms,
        sum(late_ms) / 1000 as late_seconds,
        median(late_share) as late_share,
        arg_max({'task_id': task_id, 'span_id': span_id}, coalesce(late_ms, 0), 5) as examples,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from per_loop
    group by hop_kind, hop_name, poll_name
)
select b.* exclude (poll_name), 'polling' as rule, b.poll_name as polled_hop, t.task_late_ms
from by_hop b
join per_task t on t.hop_kind is not distinct from b.hop_kind
               and t.hop_name is not distinct from b.hop_name and t.poll_name = b.poll_name
order by b.late_seconds desc nulls last
