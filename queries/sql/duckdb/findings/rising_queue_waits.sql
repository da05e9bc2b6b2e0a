-- queries.findings.saturation.rising_queue_waits: which queues' p90 wait rose from the first to the last quarter of their evidence?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_rising_queue_waits.sql:
-- the quarters are whole minutes, the p90s and the median budget come from histograms)
with spread as (
    select hop_kind, hop_name, min(first_ns) as lo_ns, max(last_ns) as hi_ns
    from temp.evidence_rows
    group by hop_kind, hop_name
),
quarters as (
    -- the minutes of the first and of the last quarter of the hop's evidence time range: from
    -- the first wait's minute to the one holding the first quarter's end, and from the one
    -- holding the last quarter's start to the last wait's
    select
        r.*,
        r.minute_ns <= (s.lo_ns + (s.hi_ns - s.lo_ns) // 4) // 60000000000 * 60000000000
            as early,
        r.minute_ns >= (s.hi_ns - (s.hi_ns - s.lo_ns) // 4) // 60000000000 * 60000000000
            as late
    from temp.evidence_rows r
    join spread s on s.hop_kind is not distinct from r.hop_kind
                 and s.hop_name is not distinct from r.hop_name
),
counted as (
    select
        hop_kind, hop_name,
        sum(n['waits'])::BIGINT as waits,
        max(n['max_wait_ms']) as max_wait_ms,
        (sum(n['waits']) filter (where early))::BIGINT as early_waits,
        min(first_ns) as first_ns,
        max(last_ns) as last_ns
    from quarters
    group by hop_kind, hop_name
    having sum(n['waits']) filter (where early) >= $saturation_min_early_waits
),
hist as (
    -- the early and the late quarter's waits, and the late quarter's budgets, of those hops
    select hop_kind, hop_name, metric, bucket::INTEGER as bucket, count
    from (
        select q.hop_kind, q.hop_name, 'early' as metric, unnest(q.vals['wait_bucket']) as bucket,
               unnest(q.vals['wait_count']) as count
        from quarters q where q.early
        union all
        select q.hop_kind, q.hop_name, 'late', unnest(q.vals['wait_bucket']),
               unnest(q.vals['wait_count'])
        from quarters q where q.late
        union all
        select q.hop_kind, q.hop_name, 'budget', unnest(q.vals['budget_bucket']),
               unnest(q.vals['budget_count'])
        from quarters q where q.late
    ) h
    semi join counted c on c.hop_kind is not distinct from h.hop_kind
                       and c.hop_name is not distinct from h.hop_name
),
probs as (
    select * from (values ('early', 'early', 0.9), ('late', 'late', 0.9),
                          ('budget', 'budget', 0.5)) p(p_metric, label, q)
),
{{hist_quantiles}},
quartered as (
    -- the p90 waits of the two quarters and the late quarter's median budget (within 1.1 %)
    select hop_kind, hop_name,
           max(value) filter (where label = 'early') as early_p90_ms,
           max(value) filter (where label = 'late') as late_p90_ms,
           max(value) filter (where label = 'budget') as late_budget_ms
    from quantiles
    group by hop_kind, hop_name
),
examples as (
    -- the late quarter's five longest waits (each minute holds its own five longest)
    select hop_kind, hop_name,
           arg_max({'task_id': x.e.task_id, 'span_id': x.e.span_id},
                   {'r': x.e.rank, 't': x.e.task_id, 's': x.e.span_id}, 5) as examples
    from (select hop_kind, hop_name, unnest(examples) as e from quarters where late) x
    group by hop_kind, hop_name
),
compared as (
    select c.hop_kind, c.hop_name, c.waits, q.early_p90_ms, q.late_p90_ms, c.max_wait_ms,
           q.late_budget_ms, c.early_waits, e.examples, c.first_ns, c.last_ns
    from counted c
    join quartered q on q.hop_kind is not distinct from c.hop_kind
                    and q.hop_name is not distinct from c.hop_name
    left join examples e on e.hop_kind is not distinct from c.hop_kind
                        and e.hop_name is not distinct from c.hop_name
)
select *
from compared
where late_p90_ms >= $saturation_min_wait_ms
  and late_p90_ms >= $saturation_wait_growth * early_p90_ms
  -- a wait that rose but leaves most of the budget is not yet saturation
  and (late_budget_ms is null or late_p90_ms >= $saturation_budget_share * late_budget_ms)
order by late_p90_ms desc
