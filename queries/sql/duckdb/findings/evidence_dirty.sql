-- queries.findings.evidence.refresh: the minutes whose evidence is stale or missing
select lo_ns, hi_ns from evidence_dirty
