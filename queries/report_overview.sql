-- One row per loaded report: identity, release, format and case counts.
-- runs_min / runs_max are over all of the report's cases (runs_max is multivon-eval's
-- runs_per_case). errored counts model, judge and evaluator errors and timeouts;
-- excluded counts cases left out because their numbers are impossible.
-- No parameters.
SELECT
    r.report_id, r.file, r.suite, r.release, r.release_source, r.release_rank, r.format,
    r.upgraded, r.model, r.target_version, r.recorded_at, r.mtime_ns,
    count(c.case_idx) AS cases_total,
    count(c.case_idx) FILTER (WHERE c.n IS NOT NULL) AS cases_evaluated,
    count(c.case_idx) FILTER (WHERE c.status IN ('model_error', 'judge_error', 'evaluator_error', 'timeout')) AS cases_errored,
    count(c.case_idx) FILTER (WHERE c.status = 'skipped') AS cases_skipped,
    count(c.case_idx) FILTER (WHERE c.excluded_reason IS NOT NULL) AS cases_excluded,
    min(c.runs) AS runs_min,
    max(c.runs) AS runs_max,
    count(c.case_idx) FILTER (WHERE c.n_trials > 0) AS cases_with_trials
FROM reports AS r LEFT JOIN cases AS c USING (report_id)
GROUP BY ALL
ORDER BY r.suite, r.release_rank, r.recorded_at, r.mtime_ns, r.file
