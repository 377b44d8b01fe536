"""ntscope.reports.slo: service-level objectives (--slo) parsed into the rows the slo views
judge."""
