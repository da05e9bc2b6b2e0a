-- queries.findings.evidence: one snapshot for a request's plan and questions (or a worker round)
begin transaction
