-- queries.findings.wait_amplification.polling_loops: which hops poll, and how late did they see the job they waited for?
-- (the verdict over the window's evidence, _evidence_polling_loops.sql, asked inline; the
-- polled name is the evidence's label)
with evidence_rows as materialized ({{evidence_polling_loops}}),
loops as (
    select
        hop_kind, hop_name, label as poll_name,
        toInt64(sum(n['loops'])) as n_loops,
        quantileExactInclusiveOrNullArray(0.5)(vals['polls']) as median_polls,
        quantileExactInclusiveOrNullArray(0.5)(vals['interval_ms']) as median_interval,
        quantileExactInclusiveOrNullArray(0.5)(vals['interval_cv']) as median_cv,
        toInt64(sum(n['loops_with_job'])) as with_job,
        quantileExactInclusiveOrNullArray(0.5)(vals['late_ms']) as median_late,
        max(n['max_late_ms']) as max_late,
        sum(n['late_ms']) / 1000 as late_s,
        quantileExactInclusiveOrNullArray(0.5)(vals['late_share']) as median_late_share,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns,
        -- each task's lateness, added up over the minutes (a task may wait on several polls):
        -- (tasks, sums, counts), the counts there so that a sum of zero is kept. Here, not in
        -- a CTE of its own, since ClickHouse analyses the evidence again at each reference
        sumMap(task_ids, vals['task_late_ms'], arrayMap(t -> 1.0, task_ids)) as task_late,
        {{evidence_best5}} as top5
    from evidence_rows
    group by hop_kind, hop_name, label
)
select
    l.hop_kind as hop_kind, l.hop_name as hop_name, l.n_loops as loops,
    l.median_polls as polls_per_loop, l.median_interval as interval_ms,
    l.median_cv as interval_cv, l.with_job as loops_with_job, l.median_late as late_ms,
    l.max_late as max_late_ms, l.late_s as late_seconds, l.median_late_share as late_share,
    l.top5 as examples, l.first_ns as first_ns, l.last_ns as last_ns, 'polling' as rule,
    l.poll_name as polled_hop,
    if(empty(l.task_late.2), null, arrayReduce('quantileExactInclusive(0.5)', l.task_late.2))
        as task_late_ms
from loops as l
order by late_seconds desc nulls last
settings join_use_nulls = 1, enable_materialized_cte = 1
