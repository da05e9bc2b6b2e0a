-- queries.findings.evidence.refresh: the evidence table of a question (per minute or per hour)
create table if not exists main.{{evidence_table}} (question VARCHAR, {{evidence_columns}})
