-- queries.findings.runaway_loop.steps_beyond_limit: which agents took more steps than their loop limit allows?
-- (the verdict over the window's evidence, _evidence_steps_beyond_limit.sql, asked inline)
with evidence_rows as materialized ({{evidence_steps_beyond_limit}}),
runs as (
    select
        hop_kind, hop_name,
        toInt64(sum(n['runs'])) as n_runs,
        toInt32(max(n['loop_limit'])) as max_limit,
        quantileExactInclusiveArray(0.5)(vals['steps']) as median,
        toInt64(max(n['max_steps'])) as most_steps,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns,
        {{evidence_best5}} as top5
    from evidence_rows
    group by hop_kind, hop_name
)
select
    r.hop_kind as hop_kind, r.hop_name as hop_name, r.n_runs as runs_over_limit,
    r.max_limit as loop_limit, r.median as median_steps, r.most_steps as max_steps,
    r.top5 as examples, r.first_ns as first_ns, r.last_ns as last_ns
from runs as r
order by runs_over_limit desc
settings join_use_nulls = 1, enable_materialized_cte = 1
