-- snippet: evidence of findings/long_prompts_timing_out: the model calls with a prompt that
-- ended in [lo_ns, hi_ns), one row each, timed out or not (DuckDB's twin keeps per minute
-- their counts, prompt-length histograms and least-squares terms, which merge)
select task_id, span_id, hop_kind, hop_name, assumeNotNull(input_tokens) as tokens,
       duration_ms, end_ns,
       coalesce(error_type in ('timeout', 'context_overflow'), false) as timed_out
from {{finding_spans}}
where end_ns >= {lo_ns:Int64} and end_ns < {hi_ns:Int64}
  and hop_kind = 'model' and input_tokens > 0
