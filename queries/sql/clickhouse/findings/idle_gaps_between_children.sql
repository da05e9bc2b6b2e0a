-- queries.findings.wait_amplification.idle_gaps_between_children: which hops sat idle between their children's calls (parents that poll excepted)?
-- (the verdict over the window's evidence, _evidence_idle_gaps_between_children.sql, asked
-- inline)
with evidence_rows as materialized ({{evidence_idle_gaps_between_children}}),
parents as (
    select
        hop_kind, hop_name,
        toInt64(sum(n['parents'])) as n_parents,
        quantileExactInclusiveOrNullArray(0.5)(vals['mean_gap_ms']) as median_gap,
        quantileExactInclusiveOrNullArray(0.5)(vals['gaps']) as median_gaps,
        quantileExactInclusiveOrNullArray(0.5)(vals['idle_share']) as median_share,
        sum(n['idle_ms']) / 1000 as idle_seconds,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns,
        {{evidence_best5}} as top5
    from evidence_rows
    group by hop_kind, hop_name
)
select p.hop_kind as hop_kind, p.hop_name as hop_name, 'idle_gaps' as rule,
       p.n_parents as parents, p.median_gap as interval_ms, p.median_gaps as gaps_per_parent,
       p.median_share as idle_share, p.idle_seconds as idle_seconds, p.top5 as examples,
       p.first_ns as first_ns, p.last_ns as last_ns
from parents as p
order by idle_seconds desc
settings join_use_nulls = 1, enable_materialized_cte = 1
