-- queries.findings.evidence.ask: the question's evidence of [$lo_ns, $hi_ns), from raw rows
insert into temp.evidence_rows by name
select * from ({{evidence}})
