blamed as (
    -- blamed tasks (agentsla.contract.BLAMED_OUTCOMES) belonging to the window holding their end
    select *
    from tasks
    where finished and outcome in ('failed', 'degraded', 'budget_exhausted', 'rejected')
      and end_ns >= $start_ns and end_ns < $end_ns
{{task_filters}}
)
