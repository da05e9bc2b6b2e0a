-- queries.tasks.get_trace: the spans of one trace, in start order
select *
from spans
where trace_id = {trace_id:String}
order by start_ns, span_id
limit {limit:UInt64}
