-- queries.findings.missing_timeout.long_calls_without_timeout: which hops without a timeout had calls that ran long (or long for the hop)?
-- (the verdict over the minutes' evidence in temp.evidence_rows,
-- _evidence_long_calls_without_timeout.sql)
with suspects as (
    -- hops with a call that may be long
    select hop_kind, hop_name
    from temp.evidence_rows
    group by hop_kind, hop_name
    having sum(n['candidates']) > 0
),
hist as (
    -- the durations of all the calls of those hops, as one histogram per hop
    select r.hop_kind, r.hop_name, 'duration_ms' as metric,
           unnest(r.vals['duration_bucket'])::INTEGER as bucket,
           unnest(r.vals['duration_count']) as count
    from temp.evidence_rows r
    semi join suspects s on s.hop_kind is not distinct from r.hop_kind
                        and s.hop_name is not distinct from r.hop_name
),
probs as (
    select 'duration_ms' as p_metric, 'p50' as label, 0.5 as q
),
{{hist_quantiles}},
typical as (
    -- the p50 of all the hop's calls (within 1.1 %), for those hops only
    select r.hop_kind, r.hop_name, sum(r.n['calls'])::BIGINT as calls, any_value(q.value) as p50_ms
    from temp.evidence_rows r
    join quantiles q on q.hop_kind is not distinct from r.hop_kind
                    and q.hop_name is not distinct from r.hop_name
    group by r.hop_kind, r.hop_name
),
candidates as (
    select
        hop_kind, hop_name, minute_ns,
        unnest(vals['long_ms']) as duration_ms,
        unnest(vals['end_off_ns']) as end_off_ns,
        unnest(vals['bad']) as bad,
        unnest(task_ids) as task_id
    from temp.evidence_rows
    where n['candidates'] > 0
),
long_calls as (
    select c.*, c.minute_ns + c.end_off_ns::BIGINT as end_ns, t.calls, t.p50_ms
    from candidates c
    join typical t on t.hop_kind is not distinct from c.hop_kind
                  and t.hop_name is not distinct from c.hop_name
    where c.duration_ms > $missing_timeout_long_ms
       or (c.duration_ms > $missing_timeout_p50_factor * t.p50_ms
           and c.duration_ms > $missing_timeout_floor_ms)
),
per_hop as (
    select
        hop_kind, hop_name,
        max(duration_ms) as max_ms,
        count(*) as long_calls,
        any_value(calls) as calls,
        any_value(p50_ms) as p50_ms,
        median(duration_ms) as median_long_ms,
        count(distinct task_id) filter (where bad = 1) as bad_tasks,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from long_calls
    group by hop_kind, hop_name
),
examples as (
    -- each minute's five longest calls that may be long hold the window's five longest long ones
    select
        x.hop_kind, x.hop_name,
        arg_max({'task_id': x.e.task_id, 'span_id': x.e.span_id},
                {'r': x.e.rank, 't': x.e.task_id, 's': x.e.span_id}, 5) as examples
    from (select hop_kind, hop_name, unnest(examples) as e from temp.evidence_rows) x
    join typical t on t.hop_kind is not distinct from x.hop_kind
                  and t.hop_name is not distinct from x.hop_name
    where x.e.rank > $missing_timeout_long_ms
       or (x.e.rank > $missing_timeout_p50_factor * t.p50_ms
           and x.e.rank > $missing_timeout_floor_ms)
    group by x.hop_kind, x.hop_name
)
select
    h.hop_kind, h.hop_name, h.max_ms, h.long_calls, h.calls, h.p50_ms, h.median_long_ms,
    h.bad_tasks, e.examples, h.first_ns, h.last_ns
from per_hop h
left join examples e on e.hop_kind is not distinct from h.hop_kind
                    and e.hop_name is not distinct from h.hop_name
order by max_ms desc
