-- queries.findings.budget_inversion.children_exceeding_parent_timeout: which hops that timed out have sequential children whose worst cases exceed it?
with parents as (
    -- hops with a timeout that ended in the window
    select trace_id, span_id, task_id, hop_kind, hop_name, hop_timeout_ms, is_error, error_type,
           end_ns
    from spans
    where end_ns >= $start_ns and end_ns < $end_ns
      and hop_timeout_ms > 0
),
child_calls as (
    -- first attempts of their timed children, with the worst case of each logical call
    select
        c.trace_id, c.parent_span_id, c.start_ns,
        c.hop_timeout_ms * (coalesce(c.retry_max, 0) + 1) as worst_ms,
        max(c.end_ns) over (partition by c.trace_id, c.parent_span_id order by c.start_ns
                            rows between unbounded preceding and 1 preceding) as prev_end_ns
    from spans c
    semi join parents p on p.trace_id = c.trace_id and p.span_id = c.parent_span_id
    where coalesce(c.attempt, c.retry_attempt, 0) = 0 and c.hop_timeout_ms > 0
),
sums as (
    select
        trace_id, parent_span_id,
        count(*) as child_calls,
        sum(worst_ms) as children_worst_ms,
        -- parallel children do not add up; only judge parents whose children ran one by one
        count(*) filter (where start_ns < prev_end_ns) as overlapping
    from child_calls
    group by trace_id, parent_span_id
)
select
    p.hop_kind, p.hop_name,
    count(*) as parents,
    max(p.hop_timeout_ms) as parent_timeout_ms,
    median(s.children_worst_ms) as median_children_worst_ms,
    max(s.children_worst_ms) as max_children_worst_ms,
    median(s.child_calls) as median_child_calls,
    count(*) filter (where p.error_type in ('timeout', 'budget_exhausted')) as parents_timed_out,
    arg_max({'task_id': p.task_id, 'span_id': p.span_id}, s.children_worst_ms, 5) as examples,
    min(p.end_ns) as first_ns,
    max(p.end_ns) as last_ns
from parents p
join sums s on s.trace_id = p.trace_id and s.parent_span_id = p.span_id
where s.overlapping = 0 and s.child_calls >= 2 and s.children_worst_ms > p.hop_timeout_ms
group by p.hop_kind, p.hop_name
-- a configuration risk only becomes a finding once such a parent actually ran out of time
having count(*) filter (where p.error_type in ('timeout', 'budget_exhausted')) > 0
order by parents desc
