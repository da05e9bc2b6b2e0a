-- queries.findings.evidence.ask: the question's stored evidence of the clean minutes of
-- [$roll_lo, $roll_hi) (in the snapshot evidence_plan read): the whole hours of $hours from the
-- hour tier ($hour_question), every other minute from the minutes
insert into temp.evidence_rows by name
select * exclude (question)
from main.finding_evidence e
where question = $question
  and minute_ns >= $roll_lo and minute_ns < $roll_hi
  and not list_contains($hours::BIGINT[], minute_ns // 3600000000000 * 3600000000000)
  and not exists (select 1 from evidence_dirty d where e.minute_ns between d.lo_ns and d.hi_ns)
union all by name
select * exclude (question)
from main.finding_evidence_hourly
where question = $hour_question
  and minute_ns >= $roll_lo and minute_ns < $roll_hi
  and list_contains($hours::BIGINT[], minute_ns)
