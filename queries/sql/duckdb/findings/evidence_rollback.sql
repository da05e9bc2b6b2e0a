-- queries.findings.evidence: drop a failed round (the dirty minutes stay dirty)
rollback
