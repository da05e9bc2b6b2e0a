      -- only with a task filter (queries/hops.py drops it otherwise)
      and s.task_id in (select task_id from tasks where true
{{task_filters}}
      )
