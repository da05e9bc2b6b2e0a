-- queries.findings.ghost_work.work_after_cutoff: which hops kept working after the task's root ended or its deadline passed?
-- (the verdict over the window's evidence, _evidence_work_after_cutoff.sql, asked inline)
with evidence_rows as materialized ({{evidence_work_after_cutoff}}),
ghosts as (
    select
        hop_kind, hop_name,
        sum(n['ms_after']) / 1000 as seconds,
        toInt64(sum(n['tokens_after'])) as tokens,
        toInt64(sum(n['spans'])) as n_spans,
        toInt64(uniqExactArray(task_ids)) as n_tasks,
        max(n['max_ms_after']) as max_ms,
        toInt64(sum(n['started_after_cutoff'])) as started_after,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns,
        {{evidence_best5}} as top5
    from evidence_rows
    group by hop_kind, hop_name
)
select
    g.hop_kind as hop_kind, g.hop_name as hop_name, g.seconds as seconds_after,
    g.tokens as tokens_after, g.n_spans as spans, g.n_tasks as tasks, g.max_ms as max_ms_after,
    g.started_after as started_after_cutoff, g.top5 as examples, g.first_ns as first_ns,
    g.last_ns as last_ns
from ghosts as g
order by seconds_after desc
settings join_use_nulls = 1, enable_materialized_cte = 1
