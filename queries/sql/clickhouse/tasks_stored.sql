-- queries.metrics.render_metrics: the finished tasks still stored, by type and outcome
select task_type, outcome, count() as tasks
from tasks
where finished
group by task_type, outcome
order by task_type nulls first, outcome
