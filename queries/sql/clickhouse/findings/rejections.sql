-- queries.findings.saturation.rejections: where were finished tasks rejected, and what share of all finished tasks?
-- (the verdict over the window's finished tasks, _evidence_rejections.sql, asked inline)
with finished as ({{evidence_rejections}}),
total as (
    select count() as n_tasks
    from finished
),
rejected as (
    select
        hop_kind, hop_name,
        count() as n_rejected,
        arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
                 arraySlice(arrayReverseSort(groupArray(
                     (toFloat64(end_ns), task_id, assumeNotNull(example_span_id)))), 1, 5))
            as top,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from finished
    where outcome = 'rejected'
    group by hop_kind, hop_name
)
select
    r.hop_kind as hop_kind, r.hop_name as hop_name,
    r.n_rejected as rejected_tasks,
    r.n_rejected / t.n_tasks as rejected_share,
    r.top as examples,
    r.first_ns as first_ns,
    r.last_ns as last_ns
from rejected as r
cross join total as t
where r.n_rejected >= {saturation_min_rejections:Float64}
  and r.n_rejected >= {saturation_rejection_share:Float64} * t.n_tasks
order by rejected_tasks desc
