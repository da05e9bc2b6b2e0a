-- queries.findings.saturation.rejections: where were finished tasks rejected, and what share of all finished tasks?
-- (the verdict over the window's evidence, _evidence_rejections.sql, asked inline)
with evidence_rows as materialized ({{evidence_rejections}}),
total as (
    select sum(n['finished']) as n_tasks
    from evidence_rows
    where hop_kind is null
),
rejected as (
    select
        hop_kind, hop_name,
        toInt64(sum(n['rejected'])) as n_rejected,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns,
        {{evidence_best5}} as top5
    from evidence_rows
    where hop_kind is not null
    group by hop_kind, hop_name
)
select
    r.hop_kind as hop_kind, r.hop_name as hop_name,
    r.n_rejected as rejected_tasks,
    r.n_rejected / t.n_tasks as rejected_share,
    r.top5 as examples,
    r.first_ns as first_ns,
    r.last_ns as last_ns
from rejected as r
cross join total as t
where r.n_rejected >= {saturation_min_rejections:Float64}
  and r.n_rejected >= {saturation_rejection_share:Float64} * t.n_tasks
order by rejected_tasks desc
settings join_use_nulls = 1, enable_materialized_cte = 1
