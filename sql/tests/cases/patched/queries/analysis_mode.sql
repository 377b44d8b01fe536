SELECT * FROM analysis_mode
