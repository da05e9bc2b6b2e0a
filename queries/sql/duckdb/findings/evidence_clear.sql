-- queries.findings.evidence.refresh: forget the evidence of the minutes [$lo_ns, $hi_ns)
delete from main.finding_evidence where minute_ns >= $lo_ns and minute_ns < $hi_ns
