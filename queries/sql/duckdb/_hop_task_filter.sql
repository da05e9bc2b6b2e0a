      -- only with a task filter: DuckDB does not drop `(null is null or x in (...))` for bound
      -- nulls, and the semi-join probe costs a pass over every span's task_id. The filter's
      -- unqualified columns resolve to `tasks` (the innermost scope), not to the span.
      and s.task_id in (select task_id from tasks where true
{{task_filters}}
      )
