-- queries.findings.evidence.refresh: store a question's evidence of [lo_ns, hi_ns), after
-- evidence_clear's deleted rows (version + 1)
insert into agentsla_finding_evidence (question, minute_ns, hop_kind, hop_name, task_type,
    label, n, task_ids, vals, examples, first_ns, last_ns, version, is_deleted)
select {question:String}, minute_ns, hop_kind, hop_name, task_type, label, n, task_ids, vals,
       examples, first_ns, last_ns, {version:UInt64} + 1, 0
from ({{evidence}})
settings join_use_nulls = 1, enable_materialized_cte = 1
