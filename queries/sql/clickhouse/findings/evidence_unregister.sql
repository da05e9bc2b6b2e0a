-- queries.findings.evidence._register: nothing to do here (evidence_register's newer row
-- replaces the registration)
select 1 where false
