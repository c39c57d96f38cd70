-- The suites of the reports with ids from $first on (those this load added). One row:
-- (suite).
SELECT DISTINCT suite FROM reports WHERE report_id >= $first
