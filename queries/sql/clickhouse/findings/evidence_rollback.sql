-- queries.findings.evidence.refresh: no transaction to roll back (the order of its writes
-- keeps a failed round's minutes dirty)
select 1 where false
