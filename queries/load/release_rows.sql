-- What a report's release is decided from, and its release as stored, for every report of
-- the suites given. One row: one report. $suites: the suites (NULL: every suite).
SELECT report_id, file, suite, model, target_version, recorded_at, release, release_source,
       release_rank, CAST(metadata AS VARCHAR) AS metadata, harness
FROM reports
WHERE $suites IS NULL OR list_contains($suites, suite)
