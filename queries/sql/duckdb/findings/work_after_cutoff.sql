-- queries.findings.ghost_work.work_after_cutoff: which hops kept working after the task's root ended or its deadline passed?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_work_after_cutoff.sql)
with ghosts as (
    select
        hop_kind, hop_name,
        sum(n['ms_after']) / 1000 as seconds_after,
        sum(n['tokens_after'])::HUGEINT as tokens_after,
        sum(n['spans'])::BIGINT as spans,
        len(list_distinct(flatten(list(task_ids))))::BIGINT as tasks,
        max(n['max_ms_after']) as max_ms_after,
        sum(n['started_after_cutoff'])::BIGINT as started_after_cutoff,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from temp.evidence_rows
    group by hop_kind, hop_name
),
examples as ({{evidence_examples}})
select
    g.hop_kind, g.hop_name, g.seconds_after, g.tokens_after, g.spans, g.tasks, g.max_ms_after,
    g.started_after_cutoff, e.examples, g.first_ns, g.last_ns
from ghosts g
left join examples e on e.hop_kind is not distinct from g.hop_kind
                    and e.hop_name is not distinct from g.hop_name
order by seconds_after desc
