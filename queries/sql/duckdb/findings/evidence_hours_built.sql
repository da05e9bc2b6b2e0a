-- queries.findings.evidence.refresh: the hour $hour_ns's hour-tier evidence is current
delete from main.evidence_hours_stale where hour_ns = $hour_ns
