-- snippet `poll_loops` (CTEs poll_parents, poll_family, polls, poll_candidates, poll_loops) of the
-- wait_amplification questions: poll loops, i.e. one parent's same-name children starting at a
-- steady interval (at least polling_min_gaps intervals, coefficient of variation at most
-- polling_max_cv), whatever their durations. Model calls are never polls, and a parent that
-- does other work between the repeats is looping, not polling. One row per (trace_id,
-- parent_span_id, poll_name). Parents are those that ended in [lo_ns, hi_ns); their children
-- those that started within span_slack_ns of the parent's end, read among the spans that
-- started in [reach_ns, reach_end_ns). DuckDB's _poll_loops.sql, step for step (its last, the
-- loops without other work, as a left join: one read of the candidates).
poll_parents as materialized (
    -- spans that ended in the range (any of them may poll)
    select trace_id, span_id, task_id, hop_kind, hop_name, duration_ms, end_ns
    from {{finding_spans}}
    where end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
),
poll_family as materialized (
    -- the spans of those parents' traces that started around the range
    select trace_id, span_id, assumeNotNull(parent_span_id) as parent_span_id, name, hop_kind,
           hop_name, start_ns, end_ns, attempt, retry_attempt
    from {{finding_spans}}
    where trace_id in (select trace_id from poll_parents)
      and start_ns >= {reach_ns:Int64} and start_ns < {reach_end_ns:Int64}
      and parent_span_id is not null
),
polls as (
    select
        c.trace_id as trace_id, c.parent_span_id as parent_span_id, c.span_id as span_id,
        toString(c.name) as poll_name, c.start_ns as start_ns, c.end_ns as end_ns,
        c.start_ns - lagInFrame(toNullable(c.start_ns)) over (
            partition by c.trace_id, c.parent_span_id, c.name order by c.start_ns
            rows between unbounded preceding and current row) as step_ns
    from poll_family as c
    inner join poll_parents as p on p.trace_id = c.trace_id and p.span_id = c.parent_span_id
    where c.start_ns >= p.end_ns - {span_slack_ns:Int64}
      and c.start_ns < p.end_ns + {span_slack_ns:Int64}
      and c.hop_kind != 'model'
),
poll_candidates as materialized (
    select
        trace_id, parent_span_id, poll_name,
        count() as polls,
        avg(step_ns) / 1e6 as interval_ms,
        coalesce(stddevPop(step_ns) / nullIf(avg(step_ns), 0), 0) as interval_cv,
        min(start_ns) as first_poll_ns,
        max(start_ns) as last_poll_ns,
        -- the last poll is the one that saw the job done: the loop stopped after it
        argMax(end_ns, start_ns) as seen_ns
    from polls
    group by trace_id, parent_span_id, poll_name
    having count(step_ns) >= {polling_min_gaps:Float64} and avg(step_ns) > 0
       and interval_cv <= {polling_max_cv:Float64}
),
poll_loops as materialized (
    -- candidates without other work (a model, tool or agent call) between their first and
    -- last poll: one read of the candidates (ClickHouse analyses a CTE again at each reference)
    select l.trace_id as trace_id, l.parent_span_id as parent_span_id,
           l.poll_name as poll_name, any(l.polls) as polls, any(l.interval_ms) as interval_ms,
           any(l.interval_cv) as interval_cv, any(l.first_poll_ns) as first_poll_ns,
           any(l.last_poll_ns) as last_poll_ns, any(l.seen_ns) as seen_ns
    from poll_candidates as l
    left join (select trace_id, parent_span_id, name, start_ns
               from poll_family
               where hop_kind in ('model', 'tool', 'agent')) as w
           on w.trace_id = l.trace_id and w.parent_span_id = l.parent_span_id
    group by l.trace_id, l.parent_span_id, l.poll_name
    having countIf(w.name != l.poll_name and w.start_ns > l.first_poll_ns
                   and w.start_ns < l.last_poll_ns) = 0
)
