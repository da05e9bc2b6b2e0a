-- snippet: evidence of findings/children_exceeding_parent_timeout for the parents with a
-- timeout that ended in [$lo_ns, $hi_ns) and whose sequential children's worst cases sum past
-- it, per minute of that end and hop (their children: those that started within
-- $span_slack_ns of the parent's end, whatever the range)
with parents as (
    select trace_id, span_id, task_id, hop_kind, hop_name, hop_timeout_ms, is_error, error_type,
           end_ns
    from spans
    where end_ns >= $lo_ns and end_ns < $hi_ns
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
                       and c.start_ns >= p.end_ns - $span_slack_ns
                       and c.start_ns < p.end_ns + $span_slack_ns
    where c.start_ns >= $reach_ns and c.start_ns < $reach_end_ns
      and coalesce(c.attempt, c.retry_attempt, 0) = 0 and c.hop_timeout_ms > 0
),
sums as (
    select
        trace_id, parent_span_id,
        count(*) as child_calls,
        sum(worst_ms) as children_worst_ms,
        -- parallel children do not add up; only judge parents whose children ran one by one
        count(*) filter (where start_ns < prev_end_ns - $clock_slack_ns) as overlapping
    from child_calls
    group by trace_id, parent_span_id
),
exceeding as (
    select p.*, s.child_calls, s.children_worst_ms
    from parents p
    join sums s on s.trace_id = p.trace_id and s.parent_span_id = p.span_id
    where s.overlapping = 0 and s.child_calls >= 2 and s.children_worst_ms > p.hop_timeout_ms
)
select
    end_ns // $grain_ns * $grain_ns as minute_ns,
    hop_kind, hop_name,
    map {'parents': count(*), 'parent_timeout_ms': max(hop_timeout_ms),
         'max_children_worst_ms': max(children_worst_ms),
         'parents_timed_out': count(*) filter (where error_type in ('timeout', 'budget_exhausted'))
        }::MAP(VARCHAR, DOUBLE) as n,
    map {'children_worst_ms': list(children_worst_ms),
         'child_calls': list(child_calls)}::MAP(VARCHAR, DOUBLE[]) as vals,
    arg_max({'task_id': task_id, 'span_id': span_id, 'rank': children_worst_ms},
            {'r': children_worst_ms, 't': task_id, 's': span_id}, 5) as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from exceeding
group by all
