-- queries.findings.runaway_loop.steps_beyond_limit: which agents took more steps than their loop limit allows?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_steps_beyond_limit.sql)
with runs as (
    select
        hop_kind, hop_name,
        sum(n['runs'])::BIGINT as runs_over_limit,
        max(n['loop_limit'])::INTEGER as loop_limit,
        list_aggregate(flatten(list(vals['steps'])), 'median') as median_steps,
        max(n['max_steps'])::BIGINT as max_steps,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from temp.evidence_rows
    group by hop_kind, hop_name
),
examples as ({{evidence_examples}})
select
    r.hop_kind, r.hop_name, r.runs_over_limit, r.loop_limit, r.median_steps, r.max_steps,
    e.examples, r.first_ns, r.last_ns
from runs r
left join examples e on e.hop_kind is not distinct from r.hop_kind
                    and e.hop_name is not distinct from r.hop_name
order by runs_over_limit desc
