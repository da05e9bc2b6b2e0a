-- queries.findings.evidence: the question's evidence of [lo_ns, hi_ns) from raw rows (as
-- DuckDB's, which inserts it into its temporary table), each row as a line of JSON, which the
-- verdict reads back as data (_evidence_given.sql): each range is its own statement, bounded
-- in memory. NaN is evidence too (rising_queue_waits: a task without a budget), so it is
-- written quoted.
select formatRowNoNewline('JSONEachRow', minute_ns, hop_kind, hop_name, task_type, label, n,
                          task_ids, vals, examples, first_ns, last_ns) as line
from ({{evidence}})
settings output_format_json_quote_denormals = 1
