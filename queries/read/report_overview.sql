-- One row per loaded report: identity, release, format and case counts (stored when the
-- report was loaded, from its cases). runs_min / runs_max are over all of the report's
-- cases (runs_max is multivon-eval's runs_per_case). errored counts model, judge and
-- evaluator errors and timeouts; excluded counts cases left out because their numbers are
-- impossible. harness: multivon-eval or inspect-ai; log_status: an Inspect log's own
-- status (NULL for multivon-eval); complete: false for a log that did not finish
-- (cancelled, error, or interrupted).
-- $suites: the suites covered (NULL: every suite); $release: the one release (NULL: all).
SELECT
    report_id, file, suite, release, release_source, release_rank, format, upgraded, model,
    target_version, recorded_at, mtime_ns, cases_total, cases_evaluated, cases_errored,
    cases_skipped, cases_excluded, runs_min, runs_per_case AS runs_max, cases_with_trials,
    harness, log_status, coalesce(log_status, 'success') = 'success' AS complete
FROM reports
WHERE ($suites IS NULL OR list_contains($suites, suite)) AND ($release IS NULL OR release = $release)
ORDER BY suite, release_rank, recorded_at, mtime_ns, file
