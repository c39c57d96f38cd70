-- Which suite and release each loaded report file belongs to. One row: one report.
-- No parameters.
SELECT file, suite, release FROM reports
