-- queries.findings.runaway_loop.loop_limit_errors: which hops stopped with error_type loop_limit?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_loop_limit_errors.sql)
with errors as (
    select
        hop_kind, hop_name,
        sum(n['loop_limit_errors'])::BIGINT as loop_limit_errors,
        len(list_distinct(flatten(list(task_ids))))::BIGINT as tasks,
        max(n['loop_limit'])::BIGINT as loop_limit,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from temp.evidence_rows
    group by hop_kind, hop_name
),
examples as ({{evidence_examples}})
select
    r.hop_kind, r.hop_name, r.loop_limit_errors, r.tasks, r.loop_limit,
    e.examples, r.first_ns, r.last_ns
from errors r
left join examples e on e.hop_kind is not distinct from r.hop_kind
                    and e.hop_name is not distinct from r.hop_name
order by loop_limit_errors desc
