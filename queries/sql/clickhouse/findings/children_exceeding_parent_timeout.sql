-- queries.findings.budget_inversion.children_exceeding_parent_timeout: which hops that timed out have sequential children whose worst cases exceed it?
-- (the verdict over the window's parents, _evidence_children_exceeding_parent_timeout.sql,
-- asked inline)
with exceeding as ({{evidence_children_exceeding_parent_timeout}}),
parents as (
    select
        hop_kind, hop_name,
        count() as n_parents,
        max(hop_timeout_ms) as max_timeout,
        quantileExactInclusive(0.5)(children_worst_ms) as median_worst,
        max(children_worst_ms) as max_worst,
        quantileExactInclusive(0.5)(child_calls) as median_calls,
        countIf(error_type in ('timeout', 'budget_exhausted')) as n_timed_out,
        arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
                 arraySlice(arrayReverseSort(groupArray(
                     (children_worst_ms, task_id, span_id))), 1, 5)) as top,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from exceeding
    group by hop_kind, hop_name
)
select hop_kind, hop_name, n_parents as parents, max_timeout as parent_timeout_ms,
       median_worst as median_children_worst_ms, max_worst as max_children_worst_ms,
       median_calls as median_child_calls, n_timed_out as parents_timed_out, top as examples,
       first_ns, last_ns
from parents
-- a configuration risk only becomes a finding once such a parent actually ran out of time
where n_timed_out > 0
order by parents desc
