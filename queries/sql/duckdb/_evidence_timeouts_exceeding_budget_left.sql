-- snippet: evidence of findings/timeouts_exceeding_budget_left for the calls with a timeout
-- that ended in [$lo_ns, $hi_ns), per minute of that end and hop; parents, roots and tasks
-- are read among those that started from $reach_ns (a task's spans start within 30 min of it);
-- what the inverted calls had left as the exponential histogram the rollups keep (vals
-- left_bucket, left_count: the window's median within 1.1 %, docs/rollups.md)
with timed_calls as (
    select trace_id, span_id, parent_span_id, task_id, hop_kind, hop_name, start_ns, end_ns,
           hop_timeout_ms, retry_max,
           coalesce(attempt, retry_attempt, 0) as attempt,  -- retry_attempt: not materialized yet
           budget_remaining_ms
    from spans
    where end_ns >= $lo_ns and end_ns < $hi_ns
      and hop_timeout_ms > 0
      and parent_span_id is not null
),
timed_tasks as (
    select task_id, trace_id, root_span_id, budget_total_ms, start_ns, outcome
    from tasks
    semi join timed_calls c on c.task_id = tasks.task_id
    where start_ns >= $reach_ns and start_ns < $hi_ns
),
around as (
    -- the spans of those calls' traces and tasks' traces (their parents and roots)
    select s.trace_id, s.span_id, s.start_ns, s.hop_timeout_ms, s.hop_name, s.budget_remaining_ms
    from spans s
    semi join (select trace_id from timed_calls union select trace_id from timed_tasks) x
           on x.trace_id = s.trace_id
    where s.start_ns >= $reach_ns and s.start_ns < $hi_ns
),
placed as (
    select
        c.task_id, c.span_id, c.hop_kind, c.hop_name, c.end_ns, c.hop_timeout_ms,
        -- attempts this call may still make, itself included
        greatest(coalesce(c.retry_max, 0) + 1 - c.attempt, 1) as attempts_left,
        coalesce(
            c.budget_remaining_ms,
            p.budget_remaining_ms - (c.start_ns - p.start_ns) / 1e6,
            t.budget_total_ms - (c.start_ns - t.start_ns) / 1e6
        ) as budget_left_ms,
        case when p.hop_timeout_ms > 0
             then p.hop_timeout_ms - (c.start_ns - p.start_ns) / 1e6 end as parent_left_ms,
        case when r.hop_timeout_ms > 0
             then r.hop_timeout_ms - (c.start_ns - r.start_ns) / 1e6 end as root_left_ms,
        p.hop_name as parent_name, r.hop_name as root_name,
        t.outcome in ('failed', 'budget_exhausted', 'lost') as task_bad
    from timed_calls c
    left join around p on p.trace_id = c.trace_id and p.span_id = c.parent_span_id
    left join timed_tasks t on t.task_id = c.task_id
    left join around r on r.trace_id = t.trace_id and r.span_id = t.root_span_id
),
judged as (
    select
        *,
        least(budget_left_ms, parent_left_ms, root_left_ms) as left_ms,  -- least() skips nulls
        hop_timeout_ms * attempts_left as worst_ms,
        -- which limit was the tightest, for the hint
        case least(budget_left_ms, parent_left_ms, root_left_ms)
            when parent_left_ms then parent_name
            when root_left_ms then root_name
            else 'the task budget'
        end as bound_by
    from placed
),
flagged as (
    select *, left_ms > 0 and worst_ms > left_ms as inverted,
           case when left_ms > 0 then left_ms end as value,  -- a log needs it positive
           {'r': worst_ms - left_ms, 't': task_id, 's': span_id} as overshoot
    from judged
)
select
    end_ns // $grain_ns * $grain_ns as minute_ns,
    hop_kind, hop_name,
    -- the call that overshot most (the headline arithmetic) is the minute's first example
    map {'calls': count(*),
         'inverted_calls': count(*) filter (where inverted),
         'timeout_alone_exceeds': count(*) filter (where inverted and hop_timeout_ms > left_ms),
         'timeout_ms': arg_max(hop_timeout_ms, overshoot) filter (where inverted),
         'attempts': arg_max(attempts_left, overshoot) filter (where inverted),
         'worst_case_ms': arg_max(worst_ms, overshoot) filter (where inverted),
         'left_ms': arg_max(left_ms, overshoot) filter (where inverted)}::MAP(VARCHAR, DOUBLE) as n,
    arg_max(bound_by, overshoot) filter (where inverted) as label,
    list(distinct task_id) filter (where inverted and task_bad) as task_ids,
    map {'left_bucket': map_keys(histogram({{hist_bucket}}) filter (where inverted)),
         'left_count': map_values(histogram({{hist_bucket}}) filter (where inverted))
        }::MAP(VARCHAR, DOUBLE[]) as vals,
    arg_max({'task_id': task_id, 'span_id': span_id, 'rank': worst_ms - left_ms}, overshoot, 5)
        filter (where inverted) as examples,
    min(end_ns) filter (where inverted) as first_ns,
    max(end_ns) filter (where inverted) as last_ns
from flagged
group by all
