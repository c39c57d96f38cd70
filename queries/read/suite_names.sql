-- The suites the catalog holds. One row: one suite. No parameters.
SELECT DISTINCT suite FROM reports ORDER BY suite
