-- rows of a rollup's minutes: the rollup range outside its whole hours
(minute_ns >= {roll_lo:Int64} and minute_ns < {hr_lo:Int64} or minute_ns >= {hr_hi:Int64} and minute_ns < {roll_hi:Int64})
