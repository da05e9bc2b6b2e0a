-- snippet `evidence_tallies` of the findings verdicts: the minutes' counts per value (n keys
-- `what=value`) added up per key (and part), for the most common value
select hop_kind, hop_name, task_type, {{evidence_part}} as part,
       substring(t.1, 1, position(t.1, '=') - 1) as what,
       substring(t.1, position(t.1, '=') + 1) as value, sum(t.2) as times
from evidence_rows
array join arrayZip(mapKeys(n), mapValues(n)) as t
where position(t.1, '=') > 0
group by hop_kind, hop_name, task_type, part, what, value
