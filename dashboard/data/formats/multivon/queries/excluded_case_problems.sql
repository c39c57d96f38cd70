-- A problem for each staged case whose numbers are impossible (stage_cases.sql gives the
-- reason): it stays in its report's case list and is left out of every metric.
-- No parameters; reads `stage_cases` and the batch's rows of `reports`.
INSERT INTO problems
SELECT r.file, 'case',
       format('case {} ({}): {}; left out of every metric',
              c.case_idx, left(coalesce(c.case_id, c.input, ''), 60), c.excluded_reason)
FROM stage_cases c JOIN reports r USING (report_id)
WHERE c.excluded_reason IS NOT NULL
