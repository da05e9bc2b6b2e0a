-- queries.findings.runaway_loop.loop_limit_errors: which hops stopped with error_type loop_limit?
-- (the verdict over the window's evidence, _evidence_loop_limit_errors.sql, asked inline)
with evidence_rows as materialized ({{evidence_loop_limit_errors}}),
errors as (
    select
        hop_kind, hop_name,
        toInt64(sum(n['loop_limit_errors'])) as n_errors,
        toInt64(uniqExactArray(task_ids)) as n_tasks,
        toInt64(max(n['loop_limit'])) as max_limit,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns,
        {{evidence_best5}} as top5
    from evidence_rows
    group by hop_kind, hop_name
)
select
    r.hop_kind as hop_kind, r.hop_name as hop_name, r.n_errors as loop_limit_errors,
    r.n_tasks as tasks, r.max_limit as loop_limit, r.top5 as examples,
    r.first_ns as first_ns, r.last_ns as last_ns
from errors as r
order by loop_limit_errors desc
settings join_use_nulls = 1, enable_materialized_cte = 1
