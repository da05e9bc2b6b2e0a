-- queries.findings: the detectors' snapshot. ClickHouse has no multi-statement transactions;
-- each question reads the parts visible when it starts (the evidence refresh orders its
-- writes instead: queries.findings.evidence.refresh), so this statement does nothing
select 1 where false
