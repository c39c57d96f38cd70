-- The suites of the reports loaded from `gone_files`, whose releases are ranked again.
-- One row: (suite). No parameters.
SELECT DISTINCT suite FROM reports
WHERE report_id IN (SELECT report_id FROM reports WHERE file IN (SELECT path FROM gone_files))
