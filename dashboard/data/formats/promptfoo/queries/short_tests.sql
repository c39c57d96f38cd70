-- Why a promptfoo report's metric is UNKNOWN at some k: for each (report, metric, k) whose
-- value is UNKNOWN, how many tests have fewer than k graded repeats, and why.
-- One row: one (report, metric, k).
-- tests: evaluated tests (0: every repeat of every test errored); shortest: the fewest
-- graded repeats of one; short: tests with fewer than k; errored: of those, tests with
-- errored repeats; repeats: the eval's --repeat (NULL when the file does not say).
-- $report_ids: the reports whose metrics were just stored.
SELECT
    m.report_id, m.metric, m.k,
    count(c.n) AS tests,
    min(c.n) AS shortest,
    count(*) FILTER (WHERE c.n < m.k) AS short,
    count(*) FILTER (WHERE c.n < m.k AND c.agent_errors > 0) AS errored,
    any_value(CAST(r.harness_facts ->> '$.repeats' AS INTEGER)) AS repeats
FROM metrics AS m
JOIN reports AS r USING (report_id)
LEFT JOIN cases AS c USING (report_id)
WHERE r.harness = 'promptfoo' AND m.value IS NULL AND list_contains($report_ids, m.report_id)
GROUP BY m.report_id, m.metric, m.k
ORDER BY m.report_id, m.metric, m.k
