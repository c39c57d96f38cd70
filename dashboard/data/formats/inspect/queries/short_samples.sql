-- Why an Inspect report's metric is UNKNOWN at some k: for each (report, k) whose value
-- is UNKNOWN although it has evaluated samples, how many samples have fewer than k scored
-- epochs, and why. One row: one (report, metric, k).
-- samples: evaluated samples; shortest: the fewest scored epochs of one; short: samples
-- with fewer than k; errored: of those, samples with errored epochs; missing: of those,
-- samples that recorded fewer epochs than the log planned (a sample can be both);
-- planned: the log's epochs (NULL when it does not say).
-- $report_ids: the reports whose metrics were just stored.
SELECT
    m.report_id, m.metric, m.k,
    count(*) AS samples,
    min(c.n) AS shortest,
    count(*) FILTER (WHERE c.n < m.k) AS short,
    count(*) FILTER (WHERE c.n < m.k AND c.agent_errors > 0) AS errored,
    count(*) FILTER (
        WHERE c.n < m.k AND c.n_trials < CAST(r.harness_facts ->> '$.epochs' AS INTEGER)
    ) AS missing,
    any_value(CAST(r.harness_facts ->> '$.epochs' AS INTEGER)) AS planned
FROM metrics AS m
JOIN reports AS r USING (report_id)
JOIN cases AS c USING (report_id)
WHERE r.harness = 'inspect-ai' AND m.value IS NULL AND c.n IS NOT NULL
  AND list_contains($report_ids, m.report_id)
GROUP BY m.report_id, m.metric, m.k
ORDER BY m.report_id, m.metric, m.k
