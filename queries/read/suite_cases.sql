-- Every case of every report of one suite, with its release, for matching cases across
-- releases and for slicing. One row: one case of one report, in release then file order.
-- n, c follow the policy, as in case_outcomes.sql.
-- $suite: the suite name; $count_agent_errors: see case_outcomes.sql; $report_ids: only
-- these reports (a list: a page's window of releases), or NULL for all of the suite's.
SELECT
    r.report_id, r.release, r.release_rank, r.file, c.case_idx, c.case_id, c.input, c.status,
    c.runs, c.tags, c.n_trials, c.excluded_reason,
    CASE
        WHEN c.excluded_reason IS NOT NULL THEN NULL
        WHEN c.status IN ('passed', 'failed_quality')
            THEN c.n + CASE WHEN $count_agent_errors THEN c.agent_errors_left_out ELSE 0 END
        WHEN $count_agent_errors AND c.status IN ('model_error', 'timeout') AND c.other_errors = 0
            THEN greatest(c.runs, 1)
    END AS n,
    CASE
        WHEN c.excluded_reason IS NOT NULL THEN NULL
        WHEN c.status IN ('passed', 'failed_quality') THEN c.c
        WHEN $count_agent_errors AND c.status IN ('model_error', 'timeout') AND c.other_errors = 0
            THEN CASE WHEN c.n_trials > 0 THEN least(c.trial_passes, greatest(c.runs, 1)) ELSE 0 END
    END AS c
FROM reports AS r JOIN cases AS c USING (report_id)
WHERE r.suite = $suite AND ($report_ids IS NULL OR list_contains($report_ids, r.report_id))
ORDER BY r.release_rank, r.report_id, c.case_idx
