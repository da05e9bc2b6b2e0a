-- queries.findings.evidence.ask: the question's hour-tier evidence ($hour_question) of the
-- built hours $hours, all within [$lo_ns, $hi_ns)
insert into temp.evidence_rows by name
select * exclude (question)
from main.{{evidence_table}}
where question = $hour_question
  and minute_ns >= $lo_ns and minute_ns < $hi_ns
  and list_contains($hours::BIGINT[], minute_ns)
