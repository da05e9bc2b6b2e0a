-- queries.findings.wait_amplification.polling_loops: which hops poll, and how late did they see the job they waited for?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_polling_loops.sql;
-- the polled name is the evidence's label)
with loops as (
    select
        hop_kind, hop_name, label as poll_name,
        sum(n['loops'])::BIGINT as loops,
        list_aggregate(flatten(list(vals['polls'])), 'median') as polls_per_loop,
        list_aggregate(flatten(list(vals['interval_ms'])), 'median') as interval_ms,
        list_aggregate(flatten(list(vals['interval_cv'])), 'median') as interval_cv,
        sum(n['loops_with_job'])::BIGINT as loops_with_job,
        list_aggregate(flatten(list(vals['late_ms'])), 'median') as late_ms,
        max(n['max_late_ms']) as max_late_ms,
        sum(n['late_ms']) / 1000 as late_seconds,
        list_aggregate(flatten(list(vals['late_share'])), 'median') as late_share,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from temp.evidence_rows
    group by hop_kind, hop_name, label
),
per_task as (
    -- each task's lateness, added up over the minutes (a task may wait on several polls)
    select hop_kind, hop_name, poll_name, median(late_ms) as task_late_ms
    from (select hop_kind, hop_name, poll_name, task_id, sum(late_ms) as late_ms
          from (select hop_kind, hop_name, label as poll_name, unnest(task_ids) as task_id,
                       unnest(vals['task_late_ms']) as late_ms
                from temp.evidence_rows)
          group by all)
    group by all
),
examples as ({{evidence_examples}})
select
    l.hop_kind, l.hop_name, l.loops, l.polls_per_loop, l.interval_ms, l.interval_cv,
    l.loops_with_job, l.late_ms, l.max_late_ms, l.late_seconds, l.late_share, e.examples,
    l.first_ns, l.last_ns, 'polling' as rule, l.poll_name as polled_hop, t.task_late_ms
from loops l
left join per_task t on t.hop_kind is not distinct from l.hop_kind
                    and t.hop_name is not distinct from l.hop_name and t.poll_name = l.poll_name
left join examples e on e.hop_kind is not distinct from l.hop_kind
                    and e.hop_name is not distinct from l.hop_name and e.part = l.poll_name
order by l.late_seconds desc nulls last
