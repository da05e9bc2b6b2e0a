-- queries.findings.context_growth.long_prompts_timing_out: which models time out on prompts much longer than those of their other calls?
with model_calls as (
    select task_id, span_id, hop_kind, hop_name, input_tokens, duration_ms, end_ns,
           coalesce(error_type in ('timeout', 'context_overflow'), false) as timed_out
    from spans
    where end_ns >= $start_ns and end_ns < $end_ns
      and hop_kind = 'model' and input_tokens > 0
)
select
    hop_kind, hop_name,
    count(*) as calls,
    count(*) filter (where timed_out) as timeouts,
    median(input_tokens) filter (where timed_out) as timed_out_median_tokens,
    median(input_tokens) filter (where not timed_out) as other_median_tokens,
    regr_slope(duration_ms, input_tokens) * 1000 as ms_per_1k_tokens,
    corr(duration_ms, input_tokens) as latency_prompt_corr,
    arg_max({'task_id': task_id, 'span_id': span_id}, input_tokens, 5)
        filter (where timed_out) as examples,
    min(end_ns) filter (where timed_out) as first_ns,
    max(end_ns) filter (where timed_out) as last_ns
from model_calls
group by hop_kind, hop_name
having count(*) filter (where timed_out) > 0
   and median(input_tokens) filter (where timed_out)
       >= $context_timeout_prompt_ratio * median(input_tokens) filter (where not timed_out)
order by timeouts desc
