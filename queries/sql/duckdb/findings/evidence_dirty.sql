-- queries.findings.evidence.refresh: the minutes whose evidence is stale or missing, with the
-- ids of their rows (evidence_undirty deletes exactly those seen)
select rowid::varchar as id, lo_ns, hi_ns from evidence_dirty
