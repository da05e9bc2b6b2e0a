-- queries.findings.evidence.refresh: forget the hour tier's evidence of the hour $hour_ns
delete from main.finding_evidence_hourly where minute_ns = $hour_ns
