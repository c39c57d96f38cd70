-- Which harness wrote one report (multivon-eval, inspect-ai), for wording its UNKNOWN.
-- One row, or none when the report is not in the catalog. $report_id: the report.
SELECT harness FROM reports WHERE report_id = $report_id
