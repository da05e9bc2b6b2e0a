-- queries.findings.saturation.rising_queue_waits: which queues' p90 wait rose from the first to the last quarter of their evidence?
-- (the verdict over the window's evidence, _evidence_rising_queue_waits.sql, asked inline: the
-- quarters are cut at whole seconds, the p90s and the median budget come from histograms, as
-- DuckDB's: a minute wholly in a quarter from its minute histograms, the minute a boundary
-- cuts from its waits' seconds and buckets). Its CTEs are read as few times as they can be:
-- ClickHouse analyses a CTE again at every reference, materialized or not (docs/scale-out.md).
with evidence_rows as materialized ({{evidence_rising_queue_waits}}),
spread as (
    select hop_kind, hop_name, toInt64(sum(n['waits'])) as n_waits,
           max(n['max_wait_ms']) as max_wait, min(first_ns) as first_end,
           max(last_ns) as last_end,
           -- the quarters of the hop's evidence time range, their boundaries rounded to the
           -- nearest second: the first quarter ends before early_to_s, the last starts at
           -- late_from_s
           intDiv(first_end + intDiv(last_end - first_end, 4) + 500000000, 1000000000)
               as early_to_s,
           intDiv(last_end - intDiv(last_end - first_end, 4) + 500000000, 1000000000)
               as late_from_s
    from evidence_rows
    group by hop_kind, hop_name
),
minutes as materialized (
    -- each minute: wholly in a quarter, or cut by the quarter's boundary second
    select r.hop_kind as hop_kind, r.hop_name as hop_name, r.vals as vals,
           r.examples as examples, c.early_to_s as early_to_s, c.late_from_s as late_from_s,
           intDiv(r.minute_ns, 1000000000) as minute_s,
           minute_s + 60 <= early_to_s as early_whole,
           minute_s < early_to_s and early_to_s < minute_s + 60 as early_cut,
           minute_s >= late_from_s as late_whole,
           minute_s < late_from_s and late_from_s < minute_s + 60 as late_cut
    from evidence_rows as r
    inner join spread as c on c.hop_kind = r.hop_kind and c.hop_name = r.hop_name
),
hist as (
    -- the early and the late quarter's waits, and the late quarter's budgets: the minutes
    -- wholly in a quarter from their histograms, those a boundary cuts wait by wait (the
    -- second each ended in)
    select (hop_kind, hop_name) as grp, metric, toInt32(bucket) as bucket, sum(count) as count
    from (
        select hop_kind, hop_name, p.1 as metric, b.1 as bucket, b.2 as count
        from minutes
        array join [('early', 'wait', early_whole), ('late', 'wait', late_whole),
                    ('budget', 'budget', late_whole)] as p
        array join arrayZip(vals[concat(p.2, '_bucket')], vals[concat(p.2, '_count')]) as b
        where p.3
        union all
        select hop_kind, hop_name, p.1, p.2, 1.0
        from (select hop_kind, hop_name, minute_s + w.1 as second_s, w.2 as wait_bucket,
                     w.3 as budget_bucket, early_cut, late_cut, early_to_s, late_from_s
              from minutes
              array join arrayZip(vals['second'], vals['second_wait_bucket'],
                                  vals['second_budget_bucket']) as w
              where early_cut or late_cut)
        array join [('early', wait_bucket, early_cut and second_s < early_to_s),
                    ('late', wait_bucket, late_cut and second_s >= late_from_s),
                    ('budget', budget_bucket, late_cut and second_s >= late_from_s
                                              and not isNaN(budget_bucket))] as p
        where p.3
    )
    group by grp, metric, bucket
),
probs as (
    select 'early' as p_metric, 'early' as label, 0.9 as q
    union all select 'late', 'late', 0.9
    union all select 'budget', 'budget', 0.5
),
{{hist_quantiles}},
by_hop as (
    -- the quantiles of a hop side by side (one read of `quantiles`), with how many waits the
    -- first quarter holds
    select grp, maxIfOrNull(value, label = 'early') as early_p90,
           maxIfOrNull(value, label = 'late') as late_p90,
           maxIfOrNull(value, label = 'budget') as late_budget,
           toInt64(maxIfOrNull(n, label = 'early')) as n_early
    from quantiles
    group by grp
),
examples as (
    -- the late quarter's five longest waits: a whole minute's examples hold its five longest,
    -- a cut one's those of its late seconds
    select hop_kind, hop_name,
           arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
                    arraySlice(arrayReverseSort(groupArray(ex)), 1, 5)) as top
    from (select hop_kind, hop_name, late_whole, late_from_s, e.1 as ex,
                 minute_s + e.2 as second_s
          from minutes
          array join arrayZip(examples, vals['example_second']) as e
          where late_whole or late_cut)
    where late_whole or second_s >= late_from_s
    group by hop_kind, hop_name
)
select c.hop_kind as hop_kind, c.hop_name as hop_name, c.n_waits as waits,
       q.early_p90 as early_p90_ms, q.late_p90 as late_p90_ms, c.max_wait as max_wait_ms,
       q.late_budget as late_budget_ms, q.n_early as early_waits, x.top as examples,
       c.first_end as first_ns, c.last_end as last_ns
from spread as c
inner join by_hop as q on q.grp = (c.hop_kind, c.hop_name)
left join examples as x on x.hop_kind = c.hop_kind and x.hop_name = c.hop_name
where q.early_p90 is not null and q.late_p90 is not null
  and q.n_early >= {saturation_min_early_waits:Float64}
  and q.late_p90 >= {saturation_min_wait_ms:Float64}
  and q.late_p90 >= {saturation_wait_growth:Float64} * q.early_p90
  -- a wait that rose but leaves most of the budget is not yet saturation
  and (q.late_budget is null or q.late_p90 >= {saturation_budget_share:Float64} * q.late_budget)
order by late_p90_ms desc
settings join_use_nulls = 1, enable_materialized_cte = 1
