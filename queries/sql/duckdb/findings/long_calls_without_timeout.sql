-- queries.findings.missing_timeout.long_calls_without_timeout: which hops without a timeout had calls that ran long (or long for the hop)?
with untimed as (
    -- calls declared with no timeout that ended in the window
    select s.task_id, s.span_id, s.hop_kind, s.hop_name, s.duration_ms, s.end_ns
    from spans s
    where s.end_ns >= $start_ns and s.end_ns < $end_ns
      and s.hop_timeout_ms = 0
),
typical as (
    select hop_kind, hop_name, count(*) as calls, median(duration_ms) as p50_ms
    from untimed
    group by hop_kind, hop_name
),
long_calls as (
    select u.*, t.calls, t.p50_ms
    from untimed u
    join typical t on t.hop_kind is not distinct from u.hop_kind
                  and t.hop_name is not distinct from u.hop_name
    where u.duration_ms > $missing_timeout_long_ms
       or (u.duration_ms > $missing_timeout_p50_factor * t.p50_ms
           and u.duration_ms > $missing_timeout_floor_ms)
)
select
    l.hop_kind, l.hop_name,
    max(l.duration_ms) as max_ms,
    count(*) as long_calls,
    any_value(l.calls) as calls,
    any_value(l.p50_ms) as p50_ms,
    median(l.duration_ms) as median_long_ms,
    count(distinct l.task_id)
        filter (where k.outcome in ('failed', 'budget_exhausted', 'lost')) as bad_tasks,
    arg_max({'task_id': l.task_id, 'span_id': l.span_id}, l.duration_ms, 5) as examples,
    min(l.end_ns) as first_ns,
    max(l.end_ns) as last_ns
from long_calls l
left join tasks k on k.task_id = l.task_id
group by l.hop_kind, l.hop_name
order by max_ms desc
