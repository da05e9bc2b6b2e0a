-- queries.findings.evidence._register: every minute of the judged spans is dirty
insert into agentsla_evidence_dirty (id, lo_ns, hi_ns)
select concat('evidence/', toString(generateUUIDv4())),
       intDiv(min(start_ns), 60000000000) * 60000000000,
       intDiv(max(end_ns), 60000000000) * 60000000000
from finding_spans
having count() > 0
