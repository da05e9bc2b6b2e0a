-- snippet: evidence of findings/idle_gaps_between_children for the idle parents that ended
-- in [lo_ns, hi_ns), per minute of that end and hop (their children: those that started
-- within span_slack_ns of the parent's end, as poll_loops reads them); DuckDB's twin. Which
-- gaps, polls and parents count depends on thresholds (the stored evidence is named with
-- them: queries.findings.evidence.question_id).
with {{poll_loops}},
children as (
    select
        c.trace_id as trace_id, c.parent_span_id as parent_span_id, c.start_ns as start_ns,
        coalesce(c.attempt, c.retry_attempt, 0) as nth,  -- retry_attempt: not materialized yet
        c.end_ns as end_ns
    from poll_family as c
    inner join poll_parents as p on p.trace_id = c.trace_id and p.span_id = c.parent_span_id
    where c.start_ns >= p.end_ns - {span_slack_ns:Int64}
      and c.start_ns < p.end_ns + {span_slack_ns:Int64}
),
gaps as (
    select trace_id, parent_span_id, nth,
        (start_ns - maxOrNull(end_ns) over (
            partition by trace_id, parent_span_id order by start_ns, end_ns
            rows between unbounded preceding and 1 preceding)) / 1e6 as gap_ms
    from children
),
per_parent as (
    -- the wait before a retry is backoff, judged by retry_amplification
    select trace_id, parent_span_id, count() as n_gaps, sum(gap_ms) as idle,
           avg(gap_ms) as mean_gap
    from gaps
    where gap_ms >= {wait_min_gap_ms:Float64} and nth = 0
    group by trace_id, parent_span_id
),
idle_parents as (
    select p.task_id as task_id, p.span_id as span_id, p.hop_kind as hop_kind,
           p.hop_name as hop_name, p.end_ns as end_ns, g.n_gaps as gaps, g.idle as idle_ms,
           g.mean_gap as mean_gap_ms, g.idle / nullIf(p.duration_ms, 0) as idle_share,
           (g.idle, p.task_id, p.span_id) as ex
    from poll_parents as p
    inner join per_parent as g on g.trace_id = p.trace_id and g.parent_span_id = p.span_id
    -- a parent that polls waits by design: the polling question reports it
    where (p.trace_id, p.span_id) not in (select trace_id, parent_span_id from poll_loops)
      and idle_share >= {wait_idle_share:Float64} and idle_ms >= {wait_min_idle_ms:Float64}
)
select
    intDiv(end_ns, 60000000000) * 60000000000 as minute_ns,
    hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type,
    CAST(NULL, 'Nullable(String)') as label,
    CAST([], 'Array(String)') as task_ids,
    map('parents', toFloat64(count()), 'idle_ms', sum(idle_ms)) as n,
    map('mean_gap_ms', groupArray(mean_gap_ms), 'gaps', groupArray(toFloat64(gaps)),
        'idle_share', groupArray(assumeNotNull(idle_share))) as vals,
    {{evidence_top5}} as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from idle_parents
group by minute_ns, hop_kind, hop_name
