-- queries.findings.evidence.refresh: the dirty marks (inclusive minute bounds), with their ids
-- (evidence_undirty deletes exactly those seen) and when each was marked (0: by the worker for
-- all minutes, or before the column existed)
select id, lo_ns, hi_ns, marked_ns from agentsla_evidence_dirty final
