raw_blamed as (
    -- blamed tasks (agentsla.contract.BLAMED_OUTCOMES) of the window outside the rollups'
    -- whole minutes [$roll_lo, $roll_hi), by their end
    select end_ns, ffh_kind, ffh_name, ffh_reason, duration_ms, outcome
    from tasks
    where finished and outcome in ('failed', 'degraded', 'budget_exhausted', 'rejected')
      and (end_ns >= $start_ns and end_ns < $roll_lo or end_ns >= $roll_hi and end_ns < $end_ns)
{{task_filters}}
)
