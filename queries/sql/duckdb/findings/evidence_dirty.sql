-- queries.findings.evidence.refresh: the minutes whose evidence is stale or missing, with the
-- ids of their rows (evidence_undirty deletes exactly those seen) and when each was marked (null:
-- before migration 13, or by the worker for all minutes)
select rowid::varchar as id, lo_ns, hi_ns, marked_ns from evidence_dirty
