"""ntscope sweep: a series of runs of one workload at growing load (iodepth, jobs, ...),
stage means and LAD per run (sql/sweep/*.sql), rendered as text, JSON and HTML."""
