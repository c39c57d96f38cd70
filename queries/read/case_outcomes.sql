-- Per-case trial outcomes, the estimators' input. One row: one case of one report, in
-- report then file order (case order matters: the bootstrap resamples in that order).
-- n, c: trials and passes under the chosen policy, NULL for a case left out of metrics.
-- $count_agent_errors: false (multivon-eval's rule: only passed / failed_quality cases
--   count) or true (a model error or timeout is a failed trial: per trial where 0.18+
--   reports record them, else the whole case as 0 of its runs; judge and evaluator errors
--   stay excluded; an Inspect sample's errored epochs, which n leaves out, become failed
--   trials of it).
-- $report_ids: the reports wanted, or NULL for all.
SELECT
    report_id, case_idx, case_id, input, status, runs, pass_count,
    CASE
        WHEN excluded_reason IS NOT NULL THEN NULL
        WHEN status IN ('passed', 'failed_quality')
            THEN n + CASE WHEN $count_agent_errors THEN agent_errors_left_out ELSE 0 END
        WHEN $count_agent_errors AND status IN ('model_error', 'timeout') AND other_errors = 0
            THEN greatest(runs, 1)
    END AS n,
    CASE
        WHEN excluded_reason IS NOT NULL THEN NULL
        WHEN status IN ('passed', 'failed_quality') THEN c
        WHEN $count_agent_errors AND status IN ('model_error', 'timeout') AND other_errors = 0
            THEN CASE WHEN n_trials > 0 THEN least(trial_passes, greatest(runs, 1)) ELSE 0 END
    END AS c
FROM cases
WHERE $report_ids IS NULL OR list_contains($report_ids, report_id)
ORDER BY report_id, case_idx
