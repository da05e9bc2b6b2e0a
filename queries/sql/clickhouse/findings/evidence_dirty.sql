-- queries.findings.evidence.refresh: the dirty marks (inclusive minute bounds), with their ids
-- (evidence_undirty deletes exactly those seen)
select id, lo_ns, hi_ns from agentsla_evidence_dirty final
