-- queries.findings.evidence.refresh: mark the minutes a round left dirty again (before it
-- deletes the marks it saw, so a crash between the two leaves them dirty)
insert into agentsla_evidence_dirty (id, lo_ns, hi_ns, marked_ns)
values (concat('evidence/', toString(generateUUIDv4())), {lo_ns:Int64}, {hi_ns:Int64},
        {marked_ns:Int64})
