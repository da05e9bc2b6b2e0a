{start_ns:Int64} + intDiv(s.end_ns - {start_ns:Int64}, {step_ns:Int64}) * {step_ns:Int64},
        s.hop_kind, s.hop_name