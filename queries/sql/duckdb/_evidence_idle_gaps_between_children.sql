-- snippet: evidence of findings/idle_gaps_between_children for the idle parents that ended
-- in [$lo_ns, $hi_ns), per minute of that end and hop (their children: those that started
-- within $span_slack_ns of the parent's end, as poll_loops reads them). Which gaps, polls and parents count
-- depends on thresholds (the stored evidence is named with them:
-- queries.findings.evidence.question_id).
with {{poll_loops}},
children as (
    select
        c.trace_id, c.parent_span_id, c.span_id, c.hop_name, c.start_ns,
        coalesce(c.attempt, c.retry_attempt, 0) as attempt,  -- retry_attempt: not materialized yet
        max(c.end_ns) over (partition by c.trace_id, c.parent_span_id order by c.start_ns, c.end_ns
                            rows between unbounded preceding and 1 preceding) as prev_end_ns
    from poll_family c
    semi join poll_parents p on p.trace_id = c.trace_id and p.span_id = c.parent_span_id
                            and c.start_ns >= p.end_ns - $span_slack_ns
                            and c.start_ns < p.end_ns + $span_slack_ns
),
gaps as (
    select *, (start_ns - prev_end_ns) / 1e6 as gap_ms
    from children
    where (start_ns - prev_end_ns) / 1e6 >= $wait_min_gap_ms
      -- the wait before a retry is backoff, judged by retry_amplification
      and attempt = 0
),
per_parent as (
    select trace_id, parent_span_id, count(*) as gaps, sum(gap_ms) as idle_ms,
           avg(gap_ms) as mean_gap_ms
    from gaps
    group by trace_id, parent_span_id
),
idle_parents as (
    select p.*, g.gaps, g.idle_ms, g.mean_gap_ms, g.idle_ms / nullif(p.duration_ms, 0) as idle_share
    from poll_parents p
    join per_parent g on g.trace_id = p.trace_id and g.parent_span_id = p.span_id
    -- a parent that polls waits by design: the polling question reports it
    anti join poll_loops l on l.trace_id = p.trace_id and l.parent_span_id = p.span_id
)
select
    end_ns // $grain_ns * $grain_ns as minute_ns,
    hop_kind, hop_name,
    map {'parents': count(*), 'idle_ms': sum(idle_ms)}::MAP(VARCHAR, DOUBLE) as n,
    map {'mean_gap_ms': list(mean_gap_ms), 'gaps': list(gaps),
         'idle_share': list(idle_share)}::MAP(VARCHAR, DOUBLE[]) as vals,
    arg_max({'task_id': task_id, 'span_id': span_id, 'rank': idle_ms},
            {'r': idle_ms, 't': task_id, 's': span_id}, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from idle_parents
where idle_share >= $wait_idle_share and idle_ms >= $wait_min_idle_ms
group by all
