-- queries.findings.wait_amplification.idle_gaps_between_children: which hops sat idle between their children's calls (parents that poll excepted)?
-- (the verdict over the minutes' evidence in temp.evidence_rows,
-- _evidence_idle_gaps_between_children.sql)
with parents as (
    select
        hop_kind, hop_name,
        sum(n['parents'])::BIGINT as parents,
        list_aggregate(flatten(list(vals['mean_gap_ms'])), 'median') as interval_ms,
        list_aggregate(flatten(list(vals['gaps'])), 'median') as gaps_per_parent,
        list_aggregate(flatten(list(vals['idle_share'])), 'median') as idle_share,
        sum(n['idle_ms']) / 1000 as idle_seconds,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from temp.evidence_rows
    group by hop_kind, hop_name
),
examples as ({{evidence_examples}})
select
    p.hop_kind, p.hop_name, 'idle_gaps' as rule,
    p.parents, p.interval_ms, p.gaps_per_parent, p.idle_share, p.idle_seconds,
    e.examples, p.first_ns, p.last_ns
from parents p
left join examples e on e.hop_kind is not distinct from p.hop_kind
                    and e.hop_name is not distinct from p.hop_name
order by idle_seconds desc
