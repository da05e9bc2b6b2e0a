-- queries.spans.spans_received: spans that arrived in the window, per service
select service_name, count(*) as spans
from spans
where received_ns >= $start_ns and received_ns < $end_ns
group by service_name
