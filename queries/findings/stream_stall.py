"""Stream stall: streamed model calls whose first token came late (`ttft_ms` over the threshold).

Gaps between later tokens are not in the span contract's columns yet, so only the first token
is judged.
"""

from __future__ import annotations

from agentsla.queries.findings._finding import dur, hop_label, make_finding, pct, run_question

TYPE = "stream_stall"

_SLOW_FIRST_TOKENS_SQL = """
with streamed as (
    select task_id, span_id, hop_kind, hop_name, ttft_ms, error_type, end_ns,
           ttft_ms > $stream_stall_ttft_ms as stalled
    from spans
    where end_ns >= $start_ns and end_ns < $end_ns
      and hop_kind = 'model' and ttft_ms is not null
)
select
    hop_kind, hop_name,
    count(*) as streamed_calls,
    count(*) filter (where stalled) as stalled_calls,
    count(*) filter (where stalled) / count(*) as stalled_share,
    quantile_cont(ttft_ms, 0.5) as ttft_p50_ms,
    quantile_cont(ttft_ms, 0.95) as ttft_p95_ms,
    max(ttft_ms) as ttft_max_ms,
    count(*) filter (where stalled and error_type = 'timeout') as stalled_then_timed_out,
    arg_max({'task_id': task_id, 'span_id': span_id}, ttft_ms, 5)
        filter (where stalled) as examples,
    min(end_ns) filter (where stalled) as first_ns,
    max(end_ns) filter (where stalled) as last_ns
from streamed
group by hop_kind, hop_name
having count(*) filter (where stalled) >= $stream_stall_min_calls
   and count(*) filter (where stalled) >= $stream_stall_min_share * count(*)
order by stalled_calls desc
"""


def slow_first_tokens(cur, params) -> list[dict]:
    """Answer: which streamed models were slow to send their first token?

    Columns: hop_kind, hop_name, streamed_calls, stalled_calls, stalled_share, ttft_p50_ms,
    ttft_p95_ms, ttft_max_ms, stalled_then_timed_out, examples, first_ns, last_ns.
    """
    return run_question(cur, _SLOW_FIRST_TOKENS_SQL, params)


def detect(cur, params, th) -> list[dict]:
    """Find models whose streams stall before the first token."""
    found = []
    for row in slow_first_tokens(cur, params):
        severity = "critical" if row["stalled_then_timed_out"] else "warning"
        hint = (f"{hop_label(row)}: {row['stalled_calls']} of {row['streamed_calls']} streamed "
                f"calls ({pct(row['stalled_share'])}) waited over "
                f"{dur(th['stream_stall_ttft_ms'])} for the first token (p95 "
                f"{dur(row['ttft_p95_ms'])}, max {dur(row['ttft_max_ms'])}); set a first-token "
                f"timeout below the read timeout and fail over when it fires")
        found.append(make_finding(TYPE, "slow_first_token", row, severity, hint))
    return found
