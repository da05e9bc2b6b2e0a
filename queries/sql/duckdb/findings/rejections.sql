-- queries.findings.saturation.rejections: where were finished tasks rejected, and what share of all finished tasks?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_rejections.sql)
with total as (
    select sum(n['finished']) as tasks
    from temp.evidence_rows
    where hop_kind is null
),
rejected as (
    select
        hop_kind, hop_name,
        sum(n['rejected'])::BIGINT as rejected_tasks,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from temp.evidence_rows
    where hop_kind is not null
    group by hop_kind, hop_name
),
examples as ({{evidence_examples}})
select
    r.hop_kind, r.hop_name,
    r.rejected_tasks,
    r.rejected_tasks / t.tasks as rejected_share,
    e.examples,
    r.first_ns,
    r.last_ns
from rejected r
cross join total t
left join examples e on e.hop_kind is not distinct from r.hop_kind
                    and e.hop_name is not distinct from r.hop_name
where r.rejected_tasks >= $saturation_min_rejections
  and r.rejected_tasks >= $saturation_rejection_share * t.tasks
order by r.rejected_tasks desc
