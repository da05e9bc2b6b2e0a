-- snippet: evidence of findings/children_exceeding_parent_timeout for the parents with a
-- timeout that ended in [lo_ns, hi_ns) and whose sequential children's worst cases sum past
-- it, per minute of that end and hop (their children: those that started within
-- span_slack_ns of the parent's end, whatever the range); DuckDB's twin
with parents as (
    select trace_id, span_id, task_id, hop_kind, hop_name, hop_timeout_ms, is_error, error_type,
           end_ns
    from {{finding_spans}}
    where end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
      and hop_timeout_ms > 0
),
children as (
    -- first attempts of their timed children, with the worst case of each logical call
    select c.trace_id as trace_id, assumeNotNull(c.parent_span_id) as parent_span_id,
           c.start_ns as start_ns, c.end_ns as end_ns,
           c.hop_timeout_ms * (coalesce(c.retry_max, 0) + 1) as worst_ms
    from {{finding_spans}} as c
    inner join parents as p on p.trace_id = c.trace_id and p.span_id = c.parent_span_id
    where c.start_ns >= {reach_ns:Int64} and c.start_ns < {reach_end_ns:Int64}
      and c.trace_id in (select trace_id from parents)
      and c.start_ns >= p.end_ns - {span_slack_ns:Int64}
      and c.start_ns < p.end_ns + {span_slack_ns:Int64}
      and coalesce(c.attempt, c.retry_attempt, 0) = 0 and c.hop_timeout_ms > 0
),
child_calls as (
    select *,
        -- the latest end of the earlier children (0 before the first: none overlaps it)
        max(end_ns) over (partition by trace_id, parent_span_id order by start_ns
                          rows between unbounded preceding and 1 preceding) as prev_end_ns
    from children
),
sums as (
    select
        trace_id, parent_span_id,
        count() as n_children,
        sum(worst_ms) as worst_sum,
        -- parallel children do not add up; only judge parents whose children ran one by one
        countIf(start_ns < prev_end_ns - {clock_slack_ns:Int64}) as overlapping
    from child_calls
    group by trace_id, parent_span_id
),
exceeding as (
    select p.task_id as task_id, p.span_id as span_id, p.hop_kind as hop_kind,
           p.hop_name as hop_name, p.hop_timeout_ms as hop_timeout_ms,
           p.error_type as error_type, p.end_ns as end_ns, s.n_children as child_calls,
           s.worst_sum as children_worst_ms,
           (toFloat64(children_worst_ms), task_id, span_id) as ex
    from parents as p
    inner join sums as s on s.trace_id = p.trace_id and s.parent_span_id = p.span_id
    where s.overlapping = 0 and s.n_children >= 2 and s.worst_sum > p.hop_timeout_ms
)
select
    intDiv(end_ns, 60000000000) * 60000000000 as minute_ns,
    hop_kind, hop_name, CAST(NULL, 'Nullable(String)') as task_type,
    CAST(NULL, 'Nullable(String)') as label,
    CAST([], 'Array(String)') as task_ids,
    map('parents', toFloat64(count()), 'parent_timeout_ms', toFloat64(max(hop_timeout_ms)),
        'max_children_worst_ms', toFloat64(max(children_worst_ms)),
        'parents_timed_out',
        toFloat64(countIf(error_type in ('timeout', 'budget_exhausted')))) as n,
    map('children_worst_ms', groupArray(toFloat64(children_worst_ms)),
        'child_calls', groupArray(toFloat64(child_calls))) as vals,
    {{evidence_top5}} as examples,
    min(end_ns) as first_ns,
    max(end_ns) as last_ns
from exceeding
group by minute_ns, hop_kind, hop_name
