-- queries.findings: the end of the detectors' snapshot (findings/evidence_begin.sql: nothing)
select 1 where false
