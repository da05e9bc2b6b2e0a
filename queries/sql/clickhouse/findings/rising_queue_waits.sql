-- queries.findings.saturation.rising_queue_waits: which queues' p90 wait rose from the first to the last quarter of their evidence?
-- (the verdict over the window's waits, _evidence_rising_queue_waits.sql, asked inline)
with waits as ({{evidence_rising_queue_waits}}),
spread as (
    select hop_kind, hop_name, min(end_ns) as first_end, max(end_ns) as last_end
    from waits
    group by hop_kind, hop_name
),
quarters as (
    -- the first and the last quarter of the hop's evidence time range
    select
        w.*,
        w.end_ns < s.first_end + intDiv(s.last_end - s.first_end, 4) as early,
        w.end_ns >= s.last_end - intDiv(s.last_end - s.first_end, 4) as late,
        (w.duration_ms, w.task_id, w.span_id) as ex
    from waits as w
    inner join spread as s on s.hop_kind = w.hop_kind and s.hop_name = w.hop_name
),
compared as (
    select
        hop_kind, hop_name,
        count() as n_waits,
        quantileExactInclusiveIf(0.9)(duration_ms, early) as early_p90,
        quantileExactInclusiveIf(0.9)(duration_ms, late) as late_p90,
        max(duration_ms) as max_wait,
        quantileExactInclusiveIf(0.5)(budget_total_ms, late) as late_budget,
        countIf(early) as n_early,
        arrayMap(x -> CAST((x.2, x.3), 'Tuple(task_id String, span_id String)'),
                 arraySlice(arrayReverseSort(groupArrayIf(ex, late)), 1, 5)) as top,
        min(end_ns) as first_ns,
        max(end_ns) as last_ns
    from quarters
    group by hop_kind, hop_name
)
select hop_kind, hop_name, n_waits as waits, early_p90 as early_p90_ms,
       late_p90 as late_p90_ms, max_wait as max_wait_ms, late_budget as late_budget_ms,
       n_early as early_waits, top as examples, first_ns, last_ns
from compared
where n_early >= {saturation_min_early_waits:Float64}
  and late_p90 >= {saturation_min_wait_ms:Float64}
  and late_p90 >= {saturation_wait_growth:Float64} * early_p90
  -- a wait that rose but leaves most of the budget is not yet saturation
  and (late_budget is null or late_p90 >= {saturation_budget_share:Float64} * late_budget)
order by late_p90_ms desc
