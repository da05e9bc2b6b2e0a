-- queries.findings.evidence: end the snapshot (or store the worker round)
commit
