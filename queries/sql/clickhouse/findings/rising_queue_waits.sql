-- queries.findings.saturation.rising_queue_waits: which queues' p90 wait rose from the first to the last quarter of their evidence?
-- (the verdict over the window's waits, _evidence_rising_queue_waits.sql, asked inline: the
-- quarters are cut at whole seconds and the p90s and the median budget come from exponential
-- histograms, as DuckDB's stored evidence keeps them, within 1.1 %: both engines give the same
-- numbers)
with waits as materialized ({{evidence_rising_queue_waits}}),
spread as (
    select hop_kind, hop_name, min(end_ns) as first_end, max(end_ns) as last_end
    from waits
    group by hop_kind, hop_name
),
quarters as (
    -- the first and the last quarter of the hop's evidence time range, their boundaries
    -- rounded to the nearest second (DuckDB's verdict, step for step)
    select
        w.*,
        intDiv(w.end_ns, 1000000000)
            < intDiv(s.first_end + intDiv(s.last_end - s.first_end, 4) + 500000000, 1000000000)
            as early,
        intDiv(w.end_ns, 1000000000)
            >= intDiv(s.last_end - intDiv(s.last_end - s.first_end, 4) + 500000000, 1000000000)
            as late,
        (w.duration_ms, w.task_id, w.span_id) as ex
    from waits as w
    inner join spread as s on s.hop_kind = w.hop_kind and s.hop_name = w.hop_name
),
compared as (
    select
        hop_kind, hop_name,
        count() as n_waits,
        max(duration_ms) as max_wait,
        countIf(early) as n_early,
        arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
                 arraySlice(arrayReverseSort(groupArrayIf(ex, late)), 1, 5)) as top,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from quarters
    group by hop_kind, hop_name
    having n_early >= {saturation_min_early_waits:Float64}
),
hist as (
    -- the early and the late quarter's waits, and the late quarter's budgets, of those hops
    select (hop_kind, hop_name) as grp, metric, {{hist_bucket}} as bucket, count() as count
    from (select hop_kind, hop_name, 'early' as metric, greatest(duration_ms, 0) as value
          from quarters where early
          union all
          select hop_kind, hop_name, 'late', greatest(duration_ms, 0) from quarters where late
          union all
          select hop_kind, hop_name, 'budget', greatest(budget_total_ms, 0) from quarters
          where late and budget_total_ms is not null)
    where (hop_kind, hop_name) in (select hop_kind, hop_name from compared)
    group by grp, metric, bucket
),
probs as (
    select 'early' as p_metric, 'early' as label, 0.9 as q
    union all select 'late', 'late', 0.9
    union all select 'budget', 'budget', 0.5
),
{{hist_quantiles}}
select c.hop_kind as hop_kind, c.hop_name as hop_name, c.n_waits as waits,
       e.value as early_p90_ms, l.value as late_p90_ms, c.max_wait as max_wait_ms,
       b.value as late_budget_ms, c.n_early as early_waits, c.top as examples,
       c.first_ns as first_ns, c.last_ns as last_ns
from compared as c
inner join quantiles as e on e.grp = (c.hop_kind, c.hop_name) and e.label = 'early'
inner join quantiles as l on l.grp = (c.hop_kind, c.hop_name) and l.label = 'late'
left join quantiles as b on b.grp = (c.hop_kind, c.hop_name) and b.label = 'budget'
where l.value >= {saturation_min_wait_ms:Float64}
  and l.value >= {saturation_wait_growth:Float64} * e.value
  -- a wait that rose but leaves most of the budget is not yet saturation
  and (b.value is null or l.value >= {saturation_budget_share:Float64} * b.value)
order by late_p90_ms desc
settings join_use_nulls = 1, enable_materialized_cte = 1
