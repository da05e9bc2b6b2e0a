-- rows of a rollup's hour tier: the whole hours of the rollup range
minute_ns >= $hr_lo and minute_ns < $hr_hi