-- rows of a rollup's minutes: the rollup range outside its whole hours
(minute_ns >= $roll_lo and minute_ns < $hr_lo or minute_ns >= $hr_hi and minute_ns < $roll_hi)