-- queries.findings.budget_inversion.children_exceeding_parent_timeout: which hops that timed out have sequential children whose worst cases exceed it?
-- (the verdict over the window's evidence, _evidence_children_exceeding_parent_timeout.sql,
-- asked inline)
with evidence_rows as materialized ({{evidence_children_exceeding_parent_timeout}}),
parents as (
    select
        hop_kind, hop_name,
        toInt64(sum(n['parents'])) as n_parents,
        max(n['parent_timeout_ms']) as max_timeout,
        quantileExactInclusiveOrNullArray(0.5)(vals['children_worst_ms']) as median_worst,
        max(n['max_children_worst_ms']) as max_worst,
        quantileExactInclusiveOrNullArray(0.5)(vals['child_calls']) as median_calls,
        toInt64(sum(n['parents_timed_out'])) as n_timed_out,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns,
        {{evidence_best5}} as top5
    from evidence_rows
    group by hop_kind, hop_name
)
select p.hop_kind as hop_kind, p.hop_name as hop_name, p.n_parents as parents,
       p.max_timeout as parent_timeout_ms, p.median_worst as median_children_worst_ms,
       p.max_worst as max_children_worst_ms, p.median_calls as median_child_calls,
       p.n_timed_out as parents_timed_out, p.top5 as examples, p.first_ns as first_ns,
       p.last_ns as last_ns
from parents as p
-- a configuration risk only becomes a finding once such a parent actually ran out of time
where p.n_timed_out > 0
order by parents desc
settings join_use_nulls = 1, enable_materialized_cte = 1
