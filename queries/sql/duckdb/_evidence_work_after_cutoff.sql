-- snippet: evidence of findings/work_after_cutoff for the spans that ended in [$lo_ns, $hi_ns)
-- after their task's cutoff (plus ghost_work_grace_ms: the stored evidence is named with it,
-- queries.findings.evidence.question_id), per minute of that end and hop. Their tasks are read
-- among those that started in [$tasks_from_ns, $hi_ns): from reach_ns when every span's task
-- is there (the time columns' zone maps prune the older tasks), else from the first (ghost
-- work may end long after its task began; queries.findings.evidence.FAR_TASKS).
with ended as (
    select task_id, span_id, hop_kind, hop_name, start_ns, end_ns, input_tokens, output_tokens
    from spans
    where end_ns >= $lo_ns and end_ns < $hi_ns
),
cutoffs as (
    select
        task_id, root_span_id,
        least(end_ns, start_ns + (budget_total_ms * 1e6)::bigint) as cutoff_ns  -- nulls skipped
    from tasks
    where start_ns >= $tasks_from_ns and start_ns < $hi_ns
      and task_id in (select task_id from ended)
),
ghosts as (
    select
        s.task_id, s.span_id, s.hop_kind, s.hop_name, s.end_ns,
        (s.end_ns - greatest(s.start_ns, c.cutoff_ns)) / 1e6 as ms_after,
        coalesce(s.input_tokens, 0) + coalesce(s.output_tokens, 0) as tokens,
        s.start_ns >= c.cutoff_ns as started_after
    from ended s
    join cutoffs c on c.task_id = s.task_id
    where s.span_id is distinct from c.root_span_id
      and s.end_ns > c.cutoff_ns + ($ghost_work_grace_ms * 1e6)::bigint
)
select
    end_ns // $grain_ns * $grain_ns as minute_ns,
    hop_kind, hop_name,
    map {'ms_after': sum(ms_after), 'tokens_after': sum(tokens), 'spans': count(*),
         'max_ms_after': max(ms_after),
         'started_after_cutoff': count(*) filter (where started_after)}::MAP(VARCHAR, DOUBLE) as n,
    list(distinct task_id) as task_ids,
    arg_max({'task_id': task_id, 'span_id': span_id, 'rank': ms_after},
            {'r': ms_after, 't': task_id, 's': span_id}, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from ghosts
group by all
