SELECT mode FROM analysis_mode
