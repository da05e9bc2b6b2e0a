-- queries.spans.provider_calls: model calls and failures per provider and model
select
    -- the provider as OTel GenAI names it (gen_ai.system is the deprecated spelling)
    coalesce(json_extract_string(attributes, '$."gen_ai.provider.name"'),
             json_extract_string(attributes, '$."gen_ai.system"'),
             hop_name) as provider,
    hop_name as model,
    count(*) as calls,
    count(*) filter (where is_error) as errors
from spans
where hop_kind = 'model' and end_ns >= $start_ns and end_ns < $end_ns
group by all
