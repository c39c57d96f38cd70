-- The catalog's tables. Run once per connection; every statement is idempotent.
-- One catalog describes one reports directory; `meta` records which.
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
-- One row per report file (*.json, *.eval) seen in the reports directory, loaded or not.
-- For object storage: path is the key under the prefix, mtime_ns its LastModified and
-- etag its ETag ('' for a local file), all as listed.
-- digest: scan.FAST_DIGEST and the XXH3-128 of the bytes, for change detection only (a review
-- computes the SHA-256 it publishes from the file: analysis/review.py evidence_sha256).
CREATE TABLE IF NOT EXISTS files (
    path VARCHAR PRIMARY KEY, size BIGINT, mtime_ns BIGINT, digest VARCHAR,
    report_id INTEGER, racy BOOLEAN, etag VARCHAR
);
-- The listing the last complete load ended with, by part (a top-level directory; '' for
-- the files at the top): a digest of each part's files' paths, sizes, mtimes and ETags
-- (dashboard/data/load/freshness.py ListingParts). A part holding a racy file has no row.
CREATE TABLE IF NOT EXISTS listing_parts (part VARCHAR PRIMARY KEY, digest VARCHAR);
-- One row per loaded report file: a multivon-eval report or an Inspect log (harness).
-- log_status is the log's own status (Inspect: success, cancelled, error, started; NULL
-- for multivon-eval reports); metadata is the log's eval.metadata (Inspect); harness_facts
-- holds how an Inspect log was read (scorer, pass_threshold, epochs, complete, container).
CREATE TABLE IF NOT EXISTS reports (
    report_id INTEGER PRIMARY KEY, file VARCHAR, suite VARCHAR, model VARCHAR,
    target_version VARCHAR, release VARCHAR, release_source VARCHAR, release_rank INTEGER,
    format VARCHAR, upgraded BOOLEAN, schema VARCHAR, recorded_at TIMESTAMPTZ,
    mtime_ns BIGINT, stored_pass_at_k JSON, stored_pass_hat_k JSON, runs_per_case INTEGER,
    -- case counts, fixed when the report is loaded (see report_overview.sql)
    cases_total INTEGER, cases_evaluated INTEGER, cases_errored INTEGER, cases_skipped INTEGER,
    cases_excluded INTEGER, runs_min INTEGER, cases_with_trials INTEGER,
    harness VARCHAR, log_status VARCHAR, metadata JSON, harness_facts JSON
);
-- One row per case of a loaded report, in file order (case_idx from 1).
-- status is recomputed as multivon-eval's EvalReport.from_dict does; (n, c) are the
-- trials and passes the estimators use (NULL when the case is excluded). agent_errors,
-- trial_passes and other_errors count trials (0.18+) that ended in a model error or
-- timeout, that passed, and that ended in a judge or evaluator error. agent_errors_left_out
-- counts the agent-error trials an evaluated case's n leaves out (an Inspect sample's
-- errored epochs; 0 for multivon-eval, where an error latches onto the whole case): failed
-- trials when agent errors count.
CREATE TABLE IF NOT EXISTS cases (
    report_id INTEGER, case_idx INTEGER, case_id VARCHAR, input VARCHAR,
    status VARCHAR, stored_status VARCHAR, runs INTEGER, pass_count INTEGER,
    n INTEGER, c INTEGER, agent_errors INTEGER, trial_passes INTEGER, other_errors INTEGER, score DOUBLE, model_error VARCHAR,
    judge_error VARCHAR, evaluator_error VARCHAR, tags VARCHAR[],
    n_trials INTEGER, excluded_reason VARCHAR,
    agent_errors_left_out INTEGER,
    PRIMARY KEY (report_id, case_idx)
);
-- One row per tag of a case; `key:value` tags split into dimension and value,
-- plain tags have dimension 'tag'.
CREATE TABLE IF NOT EXISTS case_tags (
    report_id INTEGER, case_idx INTEGER, tag VARCHAR, dim VARCHAR, value VARCHAR
);
-- One row per epoch of an Inspect sample: its outcome, not its transcript. A multivon-eval
-- report's trials (0.18+) have no rows: they are read back from the report file for the
-- case shown, transcripts and all (dashboard/data/load/transcripts.py).
CREATE TABLE IF NOT EXISTS trials (
    report_id INTEGER, case_idx INTEGER, trial_idx INTEGER, run_index INTEGER,
    attempt INTEGER, status VARCHAR, recorded_at TIMESTAMPTZ, model_error VARCHAR,
    judge_error VARCHAR, evaluator_error VARCHAR, latency_ms DOUBLE
);
-- Suite-level metrics of each report under the default policy (errors excluded).
CREATE TABLE IF NOT EXISTS metrics (
    report_id INTEGER, metric VARCHAR, k INTEGER, value DOUBLE, ci_low DOUBLE,
    ci_high DOUBLE, method VARCHAR, n_cases INTEGER, runs INTEGER, unknown_reason VARCHAR
);
-- Everything that could not be used, with a reason a person can act on.
-- scope: 'file' (nothing loaded), 'case' (that case left out of every metric),
-- 'report' (loaded; a warning about the file).
CREATE TABLE IF NOT EXISTS problems (file VARCHAR, scope VARCHAR, reason VARCHAR);
-- Each report's entry of the summary document, as JSON text compressed by zstandard
-- against `record_dictionary` (the first entries the catalog stored, kept as they are): a
-- load that changes one file rebuilds one entry. An entry is dropped when its label moves.
CREATE TABLE IF NOT EXISTS report_records (report_id INTEGER, record BLOB);
CREATE TABLE IF NOT EXISTS record_dictionary (data BLOB);
-- Each report's lottery cases at its own largest run count, rank 1 the best debugging
-- target (dashboard/stats/lottery.py). Written by the metrics pass: rows are only ever
-- added (an update would leave the old row group's blocks free in the file).
CREATE TABLE IF NOT EXISTS lottery (report_id INTEGER, case_idx INTEGER, rank INTEGER);
