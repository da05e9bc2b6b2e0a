-- snippet `evidence_tallies` of the findings verdicts: the minutes' counts per value (n keys
-- `what=value`) added up per key (and part, as in evidence_examples), for the most common value
select hop_kind, hop_name, task_type, part, t.key[:strpos(t.key, '=') - 1] as what,
       t.key[strpos(t.key, '=') + 1:] as value, sum(t.value) as times
from (select hop_kind, hop_name, task_type, {{evidence_part}} as part, unnest(map_entries(n)) as t
      from temp.evidence_rows)
where strpos(t.key, '=') > 0
group by all
