-- queries.findings.evidence.ask: the question's stored evidence of the clean minutes of
-- [$lo_ns, $hi_ns) (in the snapshot evidence_plan read) but those of the hours $hours, which
-- evidence_stored_hours reads from the hour tier. One plain range a statement: the scan applies
-- it before it decodes a row's lists (an `or` of ranges is not, nor a union's parts alike)
insert into temp.evidence_rows by name
select * exclude (question)
from main.{{evidence_table}} e
where question = $question
  and minute_ns >= $lo_ns and minute_ns < $hi_ns
  and not list_contains($hours::BIGINT[], minute_ns // 3600000000000 * 3600000000000)
  and not exists (select 1 from evidence_dirty d where e.minute_ns between d.lo_ns and d.hi_ns)
