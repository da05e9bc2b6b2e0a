-- the task-level filters (queries._sql.TASK_FILTER_NAMES), a bound null meaning "any"
      and ({task_type:Nullable(String)} is null or task_type = {task_type:Nullable(String)})
      and ({tenant_id:Nullable(String)} is null or tenant_id = {tenant_id:Nullable(String)})
      and ({service_name:Nullable(String)} is null or service_name = {service_name:Nullable(String)})
