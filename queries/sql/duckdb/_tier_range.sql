-- rows of a rollup's `_tiers` view for the whole minutes [$roll_lo, $roll_hi): the whole hours
-- from the stored hours, the other minutes from the stored minutes, every minute from the
-- pending rows (a merge adds them to both stored tiers); each branch a constant filter that
-- DuckDB checks against its zone maps (collector/store/rollups.py tiers_view)
(tier = 'hour' and {{hourly_range}}
 or tier = 'minute' and {{minute_range}}
 or tier = 'pending' and minute_ns >= $roll_lo and minute_ns < $roll_hi)
