SELECT offset_ns, uncertainty_ns, drift_ppm, pairs_agreeing, pairs FROM clock_offset
