-- snippet: evidence of findings/long_prompts_timing_out for the model calls with a prompt that
-- ended in [$lo_ns, $hi_ns), per minute of that end and hop: counts, the prompt lengths of the
-- timed-out and of the other calls as exponential histograms (vals timed_out_bucket/_count,
-- other_bucket/_count: the window's medians within 1.1 %, docs/rollups.md), their durations'
-- the same way (timed_out_ms_bucket/_count, other_ms_bucket/_count: a deadline cut the
-- timed-out calls short when they ran shorter than their peers) and the minute's
-- least-squares terms of
-- latency on prompt length (count, means, centred sums: they merge exactly, Chan et al.)
with timed as (
    -- each call's duration bucket (a negative duration, clock skew, counts as 0)
    select task_id, span_id, hop_kind, hop_name, input_tokens, duration_ms, end_ns, timed_out,
           {{hist_bucket}} as ms_bucket
    from (select task_id, span_id, hop_kind, hop_name, input_tokens, duration_ms, end_ns,
                 coalesce(error_type in ('timeout', 'context_overflow'), false) as timed_out,
                 greatest(duration_ms, 0) as value
          from spans
          where end_ns >= $lo_ns and end_ns < $hi_ns
            and hop_kind = 'model' and input_tokens > 0)
),
model_calls as (
    select *, input_tokens as value from timed
)
select
    end_ns // $grain_ns * $grain_ns as minute_ns,
    hop_kind, hop_name,
    map {'calls': count(*), 'timeouts': count(*) filter (where timed_out),
         'pairs': regr_count(duration_ms, input_tokens),
         'mean_tokens': regr_avgx(duration_ms, input_tokens),
         'mean_ms': regr_avgy(duration_ms, input_tokens),
         'sxx': regr_sxx(duration_ms, input_tokens),
         'syy': regr_syy(duration_ms, input_tokens),
         'sxy': regr_sxy(duration_ms, input_tokens)}::MAP(VARCHAR, DOUBLE) as n,
    map {'timed_out_bucket': map_keys(histogram({{hist_bucket}}) filter (where timed_out)),
         'timed_out_count': map_values(histogram({{hist_bucket}}) filter (where timed_out)),
         'other_bucket': map_keys(histogram({{hist_bucket}}) filter (where not timed_out)),
         'other_count': map_values(histogram({{hist_bucket}}) filter (where not timed_out)),
         'timed_out_ms_bucket': map_keys(histogram(ms_bucket) filter (where timed_out)),
         'timed_out_ms_count': map_values(histogram(ms_bucket) filter (where timed_out)),
         'other_ms_bucket': map_keys(histogram(ms_bucket) filter (where not timed_out)),
         'other_ms_count': map_values(histogram(ms_bucket) filter (where not timed_out))
        }::MAP(VARCHAR, DOUBLE[]) as vals,
    arg_max({'task_id': task_id, 'span_id': span_id, 'rank': input_tokens},
            {'r': input_tokens, 't': task_id, 's': span_id}, 5) filter (where timed_out)
        as examples,
    min(end_ns) filter (where timed_out) as first_ns,
    max(end_ns) filter (where timed_out) as last_ns
from model_calls
group by all
