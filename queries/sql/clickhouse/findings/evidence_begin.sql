-- queries.findings: the detectors' snapshot. ClickHouse has no multi-statement transactions;
-- each question reads the parts visible when it starts (nothing is stored per minute here:
-- queries.findings.evidence.RAW_ONLY), so this statement does nothing
select 1 where false
