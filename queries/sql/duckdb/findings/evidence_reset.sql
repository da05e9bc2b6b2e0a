-- queries.findings.evidence.ask: an empty temp.evidence_rows for the next question's evidence
create or replace temp table evidence_rows ({{evidence_columns}})
