-- the task-level filters (queries._sql.TASK_FILTER_NAMES), a bound null meaning "any"
      and ($task_type is null or task_type = $task_type)
      and ($tenant_id is null or tenant_id = $tenant_id)
      and ($service_name is null or service_name = $service_name)
