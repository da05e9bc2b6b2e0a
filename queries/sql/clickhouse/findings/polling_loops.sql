-- queries.findings.wait_amplification.polling_loops: which hops poll, and how late did they see the job they waited for?
-- (the verdict over the window's poll loops, _evidence_polling_loops.sql, asked inline)
with per_loop as ({{evidence_polling_loops}}),
loops as (
    select
        hop_kind, hop_name, poll_name,
        count() as n_loops,
        quantileExactInclusive(0.5)(polls) as median_polls,
        quantileExactInclusive(0.5)(interval_ms) as median_interval,
        quantileExactInclusive(0.5)(interval_cv) as median_cv,
        count(late_ms) as with_job,
        quantileExactInclusive(0.5)(late_ms) as median_late,
        max(late_ms) as max_late,
        sum(late_ms) / 1000 as late_s,
        quantileExactInclusive(0.5)(late_share) as median_late_share,
        arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
                 arraySlice(arrayReverseSort(groupArray(
                     (coalesce(late_ms, 0), task_id, span_id))), 1, 5)) as top,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from per_loop
    group by hop_kind, hop_name, poll_name
),
per_task as (
    -- a task may wait on several polls of the same hop: its lateness adds up
    select hop_kind, hop_name, poll_name, quantileExactInclusive(0.5)(task_late) as median
    from (select hop_kind, hop_name, poll_name, task_id, sum(late_ms) as task_late
          from per_loop
          where late_ms is not null
          group by hop_kind, hop_name, poll_name, task_id)
    group by hop_kind, hop_name, poll_name
)
select
    l.hop_kind as hop_kind, l.hop_name as hop_name, l.n_loops as loops,
    l.median_polls as polls_per_loop, l.median_interval as interval_ms,
    l.median_cv as interval_cv, l.with_job as loops_with_job, l.median_late as late_ms,
    l.max_late as max_late_ms, l.late_s as late_seconds, l.median_late_share as late_share,
    l.top as examples, l.first_ns as first_ns, l.last_ns as last_ns, 'polling' as rule,
    l.poll_name as polled_hop, t.median as task_late_ms
from loops as l
left join per_task as t on t.hop_kind = l.hop_kind and t.hop_name = l.hop_name
                       and t.poll_name = l.poll_name
order by late_seconds desc nulls last
settings join_use_nulls = 1, enable_materialized_cte = 1
