-- queries.findings.evidence._register: every question's evidence is in the one table
-- agentsla_finding_evidence (ordered by question), created at start-up: nothing to create
select 1
