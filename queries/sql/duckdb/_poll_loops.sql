-- snippet `poll_loops` (CTEs poll_parents, poll_family, polls, poll_candidates, poll_loops) of the
-- wait_amplification questions: poll loops, i.e. one parent's same-name children starting at a
-- steady interval (at least $polling_min_gaps intervals, coefficient of variation at most
-- $polling_max_cv), whatever their durations: polls may fill the parent's timeline. Model
-- calls are steps of work, never polls, and a parent that does other work between the repeats
-- (an agent alternating model and tool calls) is looping, not polling. One row per
-- (trace_id, parent_span_id, poll_name). Parents are those that ended in [$lo_ns, $hi_ns);
-- their children are those that started within $span_slack_ns (30 min) of the parent's end,
-- read among the spans that started in [$reach_ns, $reach_end_ns) (the time columns' zone maps
-- bound the scan), so a parent's children do not depend on the range it is asked in.
poll_parents as (
    -- spans that ended in the range (any of them may poll)
    select trace_id, span_id, task_id, hop_kind, hop_name, duration_ms, end_ns
    from spans
    where end_ns >= $lo_ns and end_ns < $hi_ns
),
poll_family as materialized (
    -- the spans of those parents' traces that started around the range, read once
    select s.trace_id, s.span_id, s.parent_span_id, s.name, s.hop_kind, s.hop_name, s.start_ns,
           s.end_ns, s.attempt, s.retry_attempt
    from spans s
    semi join (select distinct trace_id from poll_parents) p on p.trace_id = s.trace_id
    where s.start_ns >= $reach_ns and s.start_ns < $reach_end_ns
),
polls as (
    select
        c.trace_id, c.parent_span_id, c.span_id, c.name as poll_name, c.start_ns, c.end_ns,
        c.start_ns - lag(c.start_ns) over (partition by c.trace_id, c.parent_span_id, c.name
                                           order by c.start_ns) as step_ns
    from poll_family c
    semi join poll_parents p on p.trace_id = c.trace_id and p.span_id = c.parent_span_id
                            and c.start_ns >= p.end_ns - $span_slack_ns
                            and c.start_ns < p.end_ns + $span_slack_ns
    where c.hop_kind is distinct from 'model'
),
poll_candidates as (
    select
        trace_id, parent_span_id, poll_name,
        count(*) as polls,
        avg(step_ns) / 1e6 as interval_ms,
        coalesce(stddev_pop(step_ns) / nullif(avg(step_ns), 0), 0) as interval_cv,
        min(start_ns) as first_poll_ns,
        max(start_ns) as last_poll_ns,
        -- the last poll is the one that saw the job done: the loop stopped after it
        arg_max(end_ns, start_ns) as seen_ns
    from polls
    group by trace_id, parent_span_id, poll_name
    having count(step_ns) >= $polling_min_gaps and avg(step_ns) > 0
       and coalesce(stddev_pop(step_ns) / nullif(avg(step_ns), 0), 0) <= $polling_max_cv
),
poll_loops as (
    select l.*
    from poll_candidates l
    anti join poll_family w on w.trace_id = l.trace_id and w.parent_span_id = l.parent_span_id
                           and w.name <> l.poll_name and w.hop_kind in ('model', 'tool', 'agent')
                           and w.start_ns > l.first_poll_ns and w.start_ns < l.last_poll_ns
)
