-- queries.findings.saturation.rising_queue_waits: which queues' p90 wait rose from the first to the last quarter of their evidence?
-- (the verdict over the minutes' evidence in temp.evidence_rows, _evidence_rising_queue_waits.sql:
-- every wait of the window, its duration the rank of its example)
with waits as (
    select hop_kind, hop_name, w.task_id, w.span_id, w.rank as duration_ms,
           minute_ns + end_offset::BIGINT as end_ns, budget_total_ms
    from (
        select hop_kind, hop_name, minute_ns, unnest(examples) as w,
               unnest(vals['end_ns']) as end_offset, unnest(vals['budget_ms']) as budget_total_ms
        from temp.evidence_rows
    )
),
spread as (
    select hop_kind, hop_name, min(end_ns) as lo_ns, max(end_ns) as hi_ns
    from waits
    group by hop_kind, hop_name
),
quarters as (
    -- the first and the last quarter of the hop's evidence time range
    select
        w.*,
        w.end_ns < s.lo_ns + (s.hi_ns - s.lo_ns) // 4 as early,
        w.end_ns >= s.hi_ns - (s.hi_ns - s.lo_ns) // 4 as late
    from waits w
    join spread s on s.hop_kind is not distinct from w.hop_kind
                 and s.hop_name is not distinct from w.hop_name
),
compared as (
    select
        hop_kind, hop_name,
        count(*) as waits,
        quantile_cont(duration_ms, 0.9) filter (where early) as early_p90_ms,
        quantile_cont(duration_ms, 0.9) filter (where late) as late_p90_ms,
        max(duration_ms) as max_wait_ms,
        median(budget_total_ms) filter (where late) as late_budget_ms,
        count(*) filter (where early) as early_waits,
        arg_max({'task_id': task_id, 'span_id': span_id},
                {'r': duration_ms, 't': task_id, 's': span_id}, 5) filter (where late) as examples,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from quarters
    group by hop_kind, hop_name
)
select *
from compared
where early_waits >= $saturation_min_early_waits
  and late_p90_ms >= $saturation_min_wait_ms
  and late_p90_ms >= $saturation_wait_growth * early_p90_ms
  -- a wait that rose but leaves most of the budget is not yet saturation
  and (late_budget_ms is null or late_p90_ms >= $saturation_budget_share * late_budget_ms)
order by late_p90_ms desc
