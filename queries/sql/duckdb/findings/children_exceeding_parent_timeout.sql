-- queries.findings.budget_inversion.children_exceeding_parent_timeout: which hops that timed out have sequential children whose worst cases exceed it?
-- (the verdict over the minutes' evidence in temp.evidence_rows,
-- _evidence_children_exceeding_parent_timeout.sql)
with parents as (
    select
        hop_kind, hop_name,
        sum(n['parents'])::BIGINT as parents,
        max(n['parent_timeout_ms']) as parent_timeout_ms,
        list_aggregate(flatten(list(vals['children_worst_ms'])), 'median')
            as median_children_worst_ms,
        max(n['max_children_worst_ms']) as max_children_worst_ms,
        list_aggregate(flatten(list(vals['child_calls'])), 'median') as median_child_calls,
        sum(n['parents_timed_out'])::BIGINT as parents_timed_out,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from temp.evidence_rows
    group by hop_kind, hop_name
),
examples as ({{evidence_examples}})
select
    p.hop_kind, p.hop_name, p.parents, p.parent_timeout_ms, p.median_children_worst_ms,
    p.max_children_worst_ms, p.median_child_calls, p.parents_timed_out, e.examples,
    p.first_ns, p.last_ns
from parents p
left join examples e on e.hop_kind is not distinct from p.hop_kind
                    and e.hop_name is not distinct from p.hop_name
-- a configuration risk only becomes a finding once such a parent actually ran out of time
where p.parents_timed_out > 0
order by parents desc
