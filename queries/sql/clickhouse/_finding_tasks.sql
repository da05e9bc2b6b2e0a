-- the tasks a finding question reads: the view (queries.findings.scope asks one task's
-- findings with _scoped_tasks instead)
tasks
