-- queries.spans.spans_received: spans that arrived in the window, per service (the exporter
-- keeps no receive time: `received_ns` is the span's end)
select service_name, count() as spans
from spans
where received_ns >= {start_ns:Int64} and received_ns < {end_ns:Int64}
group by service_name
