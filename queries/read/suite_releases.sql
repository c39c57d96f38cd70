-- Each suite's releases, for a table that sizes its release column to them. One row: one
-- (suite, release). $suites: the suites covered (NULL: every suite).
SELECT DISTINCT suite, release
FROM reports
WHERE $suites IS NULL OR list_contains($suites, suite)
ORDER BY suite, release
