-- queries.findings.ghost_work.work_after_cutoff: which hops kept working after the task's root ended or its deadline passed?
with cutoffs as (
    select
        task_id, root_span_id,
        least(end_ns, start_ns + (budget_total_ms * 1e6)::bigint) as cutoff_ns  -- nulls skipped
    from tasks
),
ghosts as (
    select
        s.task_id, s.span_id, s.hop_kind, s.hop_name, s.end_ns,
        (s.end_ns - greatest(s.start_ns, c.cutoff_ns)) / 1e6 as ms_after,
        coalesce(s.input_tokens, 0) + coalesce(s.output_tokens, 0) as tokens,
        s.start_ns >= c.cutoff_ns as started_after
    from spans s
    join cutoffs c on c.task_id = s.task_id
    where s.end_ns >= $start_ns and s.end_ns < $end_ns
      and s.span_id is distinct from c.root_span_id
      and s.end_ns > c.cutoff_ns + ($ghost_work_grace_ms * 1e6)::bigint
)
select
    hop_kind, hop_name,
    sum(ms_after) / 1000 as seconds_after,
    sum(tokens) as tokens_after,
    count(*) as spans,
    count(distinct task_id) as tasks,
    max(ms_after) as max_ms_after,
    count(*) filter (where started_after) as started_after_cutoff,
    arg_max({'task_id': task_id, 'span_id': span_id}, ms_after, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from ghosts
group by hop_kind, hop_name
order by seconds_after desc
