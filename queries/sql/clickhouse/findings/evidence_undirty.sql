-- queries.findings.evidence.refresh: delete the marks it saw (after storing their minutes'
-- evidence); marks written since stay
insert into agentsla_evidence_dirty (id, lo_ns, hi_ns, version, is_deleted)
select id, lo_ns, hi_ns, 1, 1 from agentsla_evidence_dirty final
where id in {seen:Array(String)}
