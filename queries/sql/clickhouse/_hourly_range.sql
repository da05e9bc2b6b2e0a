-- rows of a rollup's hour tier: the whole hours of the rollup range
minute_ns >= {hr_lo:Int64} and minute_ns < {hr_hi:Int64}
