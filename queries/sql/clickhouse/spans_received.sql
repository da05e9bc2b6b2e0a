-- queries.spans.spans_received: spans that arrived in the window, per service (the exporter
-- keeps no receive time: `received_ns` is the span's end), materialized or not: over the
-- traces table alone (agentsla_typed_spans), no span facts joined
select service_name, count() as spans
from agentsla_typed_spans
where received_ns >= {start_ns:Int64} and received_ns < {end_ns:Int64}
group by service_name
