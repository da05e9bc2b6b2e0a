-- queries.findings.evidence.refresh: forget a question's evidence of the periods (minutes, or
-- the hour) starting in [$lo_ns, $hi_ns)
delete from main.{{evidence_table}} where minute_ns >= $lo_ns and minute_ns < $hi_ns
