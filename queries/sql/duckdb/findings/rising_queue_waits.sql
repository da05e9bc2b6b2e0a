-- queries.findings.saturation.rising_queue_waits: which queues' p90 wait rose from the first to the last quarter of their evidence?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_rising_queue_waits.sql:
-- the quarters are cut at whole seconds, the p90s and the median budget come from histograms:
-- a minute wholly in a quarter from its minute histograms, the minute a boundary cuts from its
-- waits' seconds and buckets)
with spread as (
    select hop_kind, hop_name, sum(n['waits'])::BIGINT as waits,
           max(n['max_wait_ms']) as max_wait_ms, min(first_ns) as first_ns,
           max(last_ns) as last_ns
    from temp.evidence_rows
    group by hop_kind, hop_name
),
cuts as (
    -- the quarters of the hop's evidence time range, their boundaries rounded to the nearest
    -- second: the first quarter ends before early_to_s, the last starts at late_from_s
    select *, (first_ns + (last_ns - first_ns) // 4 + 500000000) // 1000000000 as early_to_s,
           (last_ns - (last_ns - first_ns) // 4 + 500000000) // 1000000000 as late_from_s
    from spread
),
minutes as (
    -- each minute: wholly in a quarter, or cut by the quarter's boundary second
    select r.hop_kind, r.hop_name, r.vals, r.examples, c.early_to_s, c.late_from_s,
           r.minute_s + 60 <= c.early_to_s as early_whole,
           r.minute_s < c.early_to_s and c.early_to_s < r.minute_s + 60 as early_cut,
           r.minute_s >= c.late_from_s as late_whole,
           r.minute_s < c.late_from_s and c.late_from_s < r.minute_s + 60 as late_cut,
           r.minute_s
    from (select *, minute_ns // 1000000000 as minute_s from temp.evidence_rows) r
    join cuts c on c.hop_kind is not distinct from r.hop_kind
               and c.hop_name is not distinct from r.hop_name
),
cut_waits as (
    -- the waits of the minutes a boundary cuts, one by one: the second each ended in
    select hop_kind, hop_name, early_cut, late_cut, early_to_s, late_from_s,
           minute_s + second as second_s, wait_bucket, budget_bucket
    from (select hop_kind, hop_name, early_cut, late_cut, early_to_s, late_from_s, minute_s,
                 unnest(vals['second']) as second,
                 unnest(vals['second_wait_bucket']) as wait_bucket,
                 unnest(vals['second_budget_bucket']) as budget_bucket
          from minutes
          where early_cut or late_cut)
),
hist as (
    -- the early and the late quarter's waits, and the late quarter's budgets
    select hop_kind, hop_name, metric, bucket::INTEGER as bucket, count
    from (
        select hop_kind, hop_name, 'early' as metric, unnest(vals['wait_bucket']) as bucket,
               unnest(vals['wait_count']) as count
        from minutes where early_whole
        union all
        select hop_kind, hop_name, 'late', unnest(vals['wait_bucket']),
               unnest(vals['wait_count'])
        from minutes where late_whole
        union all
        select hop_kind, hop_name, 'budget', unnest(vals['budget_bucket']),
               unnest(vals['budget_count'])
        from minutes where late_whole
        union all
        select hop_kind, hop_name, 'early', wait_bucket, 1
        from cut_waits where early_cut and second_s < early_to_s
        union all
        select hop_kind, hop_name, 'late', wait_bucket, 1
        from cut_waits where late_cut and second_s >= late_from_s
        union all
        select hop_kind, hop_name, 'budget', budget_bucket, 1
        from cut_waits
        where late_cut and second_s >= late_from_s and budget_bucket is not null
    ) h
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
early_counts as (
    -- how many waits the first quarter holds
    select hop_kind, hop_name, sum(count)::BIGINT as early_waits
    from hist
    where metric = 'early'
    group by hop_kind, hop_name
),
examples as (
    -- the late quarter's five longest waits: a whole minute's examples hold its five longest,
    -- a cut one's those of its late seconds
    select hop_kind, hop_name,
           arg_max({'task_id': e.task_id, 'span_id': e.span_id},
                   {'r': e.rank, 't': e.task_id, 's': e.span_id}, 5) as examples
    from (select hop_kind, hop_name, late_whole, late_from_s, unnest(examples) as e,
                 minute_s + unnest(vals['example_second']) as second_s
          from minutes where late_whole or late_cut) x
    where late_whole or second_s >= late_from_s
    group by hop_kind, hop_name
),
compared as (
    select c.hop_kind, c.hop_name, c.waits, q.early_p90_ms, q.late_p90_ms, c.max_wait_ms,
           q.late_budget_ms, n.early_waits, e.examples, c.first_ns, c.last_ns
    from spread c
    join early_counts n on n.hop_kind is not distinct from c.hop_kind
                       and n.hop_name is not distinct from c.hop_name
    join quartered q on q.hop_kind is not distinct from c.hop_kind
                    and q.hop_name is not distinct from c.hop_name
    left join examples e on e.hop_kind is not distinct from c.hop_kind
                        and e.hop_name is not distinct from c.hop_name
)
select *
from compared
where early_waits >= $saturation_min_early_waits
  and late_p90_ms >= $saturation_min_wait_ms
  and late_p90_ms >= $saturation_wait_growth * early_p90_ms
  -- a wait that rose but leaves most of the budget is not yet saturation
  and (late_budget_ms is null or late_p90_ms >= $saturation_budget_share * late_budget_ms)
order by late_p90_ms desc
