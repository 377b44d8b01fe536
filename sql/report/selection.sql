-- requires: report/reports, core/stages, core/stage_definitions
-- input: report_stage_sets  one row per stage set the report holds (--stage-set: reports/report/selection.py)

-- selected_stage_values: a TABLE: report_stage_values (sql/report/reports.sql) of the report's
-- selection and stage sets, kept once. Made when the report has set io_selected (selection.apply runs this
-- folder); the report reads stage_stats_over, stage_histogram_over and stage_cdf_over of it
-- (reports/report/model.py), which as views would each compute the distinct durations again.
-- A table here and not in report/reports.sql: every connection (a compare side, `just sql`)
-- would otherwise pay for it at load time, before any selection, for nothing.
--   group_key, stage_set, stage, dur, n, upto, total   as in report_stage_values
CREATE OR REPLACE TABLE selected_stage_values AS
FROM report_stage_values WHERE stage_set IN (SELECT stage_set FROM report_stage_sets);

-- selected_unmeasured: report_unmeasured (sql/report/reports.sql) of the report's stage sets.
--   (the columns of report_unmeasured)
CREATE OR REPLACE VIEW selected_unmeasured AS
FROM report_unmeasured WHERE stage_set IN (SELECT stage_set FROM report_stage_sets);

-- selected_stage_definitions: stage_definitions (sql/core/stage_definitions.sql) of the
-- report's stage sets (report.json's stage_definitions).
--   (the columns of stage_definitions)
CREATE OR REPLACE VIEW selected_stage_definitions AS
FROM stage_definitions WHERE stage_set IN (SELECT stage_set FROM report_stage_sets);

-- selected_stage_coverage: stage_coverage (sql/core/stages.sql) of the report's stage sets
-- (report.json's stage_coverage).
--   (the columns of stage_coverage)
CREATE OR REPLACE VIEW selected_stage_coverage AS
FROM stage_coverage WHERE stage_set IN (SELECT stage_set FROM report_stage_sets);
