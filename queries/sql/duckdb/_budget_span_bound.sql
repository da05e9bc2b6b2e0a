      -- only spans starting in [lo_ns, hi_ns] (the tasks' interval plus slack): the zone maps
      -- on start_ns answer from a few row groups
      and s.start_ns >= $lo_ns and s.start_ns <= $hi_ns
