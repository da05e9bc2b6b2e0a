-- queries.spans.provider_calls: model calls and failures per provider and model
select
    -- the provider as OTel GenAI names it (gen_ai.system is the deprecated spelling)
    coalesce(nullIf(JSONExtractString(s.attributes, 'gen_ai.provider.name'), ''),
             nullIf(JSONExtractString(s.attributes, 'gen_ai.system'), ''),
             s.hop_name) as provider,
    s.hop_name as model,
    count() as calls,
    countIf(s.is_error) as errors
from spans as s
where s.hop_kind = 'model' and s.end_ns >= {start_ns:Int64} and s.end_ns < {end_ns:Int64}
group by provider, model
