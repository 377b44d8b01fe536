SELECT offset_ns, uncertainty_ns, drift_ppm, t0_ns, pairs_agreeing, pairs FROM clock_offset
