-- The fewest trials of any evaluated case of each listed report, under the policy: the
-- largest k at which the report's pass@k and pass^k are known (multivon-eval does not
-- extrapolate past the shortest-run case). One row: one listed report with at least one
-- evaluated case. n follows the policy, as in case_outcomes.sql.
-- $report_ids: the reports (a list); $count_agent_errors: see case_outcomes.sql.
SELECT report_id, min(n) AS shortest
FROM (
    SELECT
        report_id,
        CASE
            WHEN excluded_reason IS NOT NULL THEN NULL
            WHEN status IN ('passed', 'failed_quality')
                THEN n + CASE WHEN $count_agent_errors THEN agent_errors_left_out ELSE 0 END
            WHEN $count_agent_errors AND status IN ('model_error', 'timeout') AND other_errors = 0
                THEN greatest(runs, 1)
        END AS n
    FROM cases
    -- the listed reports' id range first: zone maps skip the rest of `cases`
    WHERE report_id BETWEEN list_min($report_ids) AND list_max($report_ids)
      AND list_contains($report_ids, report_id)
)
WHERE n IS NOT NULL
GROUP BY report_id
ORDER BY report_id
