-- queries.spans.provider_calls: model calls and failures per provider and model, over the
-- materialized spans (hop_spans: the provider typed by collector/store/clickhouse/schema.py)
select s.provider as provider, s.hop_name as model, count() as calls,
    countIf(s.is_error) as errors
from hop_spans as s
where s.hop_kind = 'model' and s.end_ns >= {start_ns:Int64} and s.end_ns < {end_ns:Int64}
group by provider, model
