-- the rows of the rollup {{_}} for the whole minutes of the rollup range: its stored hours
-- where the range holds whole hours, its stored minutes elsewhere (as DuckDB's `_tiers` views)
(select * from {{_}}_hourly where {{hourly_range}}
 union all
 select * from {{_}} where {{minute_range}})
