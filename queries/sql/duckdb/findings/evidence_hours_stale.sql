-- queries.findings.evidence.plan: the hours of [$lo_ns, $hi_ns) whose hour-tier evidence is
-- missing or older than their minutes' (the request reads their minutes instead)
select hour_ns from evidence_hours_stale where hour_ns >= $lo_ns and hour_ns < $hi_ns
