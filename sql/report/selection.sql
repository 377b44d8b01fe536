-- requires: report/reports

-- selected_stage_values: a TABLE: report_stage_values (sql/report/reports.sql) of the report's
-- selection, kept once. Made when the report has set io_selected (selection.apply runs this
-- folder); the report reads stage_stats_over, stage_histogram_over and stage_cdf_over of it
-- (reports/report/model.py), which as views would each compute the distinct durations again.
-- A table here and not in report/reports.sql: every connection (a compare side, `just sql`)
-- would otherwise pay for it at load time, before any selection, for nothing.
--   group_key, stage_set, stage, dur, n, upto, total   as in report_stage_values
CREATE OR REPLACE TABLE selected_stage_values AS FROM report_stage_values;
