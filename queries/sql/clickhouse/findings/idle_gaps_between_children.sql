-- queries.findings.wait_amplification.idle_gaps_between_children: which hops sat idle between their children's calls (parents that poll excepted)?
-- (the verdict over the window's idle parents, _evidence_idle_gaps_between_children.sql,
-- asked inline)
with idle_parents as ({{evidence_idle_gaps_between_children}}),
parents as (
    select
        hop_kind, hop_name,
        count() as n_parents,
        quantileExactInclusive(0.5)(mean_gap_ms) as median_gap,
        quantileExactInclusive(0.5)(gaps) as median_gaps,
        quantileExactInclusive(0.5)(idle_share) as median_share,
        sum(idle_ms) / 1000 as idle_seconds,
        arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
                 arraySlice(arrayReverseSort(groupArray((idle_ms, task_id, span_id))), 1, 5))
            as top,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from idle_parents
    group by hop_kind, hop_name
)
select hop_kind, hop_name, 'idle_gaps' as rule, n_parents as parents, median_gap as interval_ms,
       median_gaps as gaps_per_parent, median_share as idle_share, idle_seconds,
       top as examples, first_ns, last_ns
from parents
order by idle_seconds desc
settings enable_materialized_cte = 1
