"""ntscope.reports: rows of the sql/ views -> files, one subpackage per analysis (report,
timeline, slo, interference, compare, sweep; the same names as sql/'s) and plots (the chart
code the HTML pages share). Renders only: every number comes from sql/."""
