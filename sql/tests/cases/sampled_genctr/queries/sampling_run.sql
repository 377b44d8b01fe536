SELECT * FROM sampling_run;
