-- One row per (suite, release): report_overview's row of the release's most recent report
-- (the last in report_overview's order), with `files`, every report file of the release
-- in that order. Rows in report_overview's order.
-- $suites: the suites covered (NULL: every suite); $release: the one release (NULL: all).
WITH ordered AS (
    SELECT
        *,
        row_number() OVER w AS position,
        count(*) OVER (PARTITION BY suite, release) AS reports,
        list(file) OVER (
            PARTITION BY suite, release ORDER BY release_rank, recorded_at, mtime_ns, file
            ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
        ) AS files
    FROM (
        SELECT
            report_id, file, suite, release, release_source, release_rank, format, upgraded,
            model, target_version, recorded_at, mtime_ns, cases_total, cases_evaluated,
            cases_errored, cases_skipped, cases_excluded, runs_min, runs_per_case AS runs_max,
            cases_with_trials, harness, log_status,
            coalesce(log_status, 'success') = 'success' AS complete
        FROM reports
        WHERE ($suites IS NULL OR list_contains($suites, suite))
          AND ($release IS NULL OR release = $release)
    )
    WINDOW w AS (PARTITION BY suite, release ORDER BY release_rank, recorded_at, mtime_ns, file)
)
SELECT * EXCLUDE (position, reports)
FROM ordered
WHERE position = reports
ORDER BY suite, release_rank, recorded_at, mtime_ns, file
