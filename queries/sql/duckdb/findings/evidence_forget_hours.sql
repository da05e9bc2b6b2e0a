-- queries.findings.evidence.refresh: the questions to store changed: forget the hour tier's
-- evidence of the others
delete from main.finding_evidence_hourly where question not in (select unnest($questions))
