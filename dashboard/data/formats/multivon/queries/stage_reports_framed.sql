-- The rows of the temp table `stage` for a batch of small report files, as `stage_reports`
-- stages them, with one file opened instead of many: DuckDB's JSON reader has a cost for
-- each file it opens, whatever its size. The loader writes the batch's files (the bytes it
-- digested) as the elements of one JSON array, each object opened by the key
-- "relidash:report" holding a tag: this load's secret and the file's report id. The same
-- reader with the same column types reads that one file: the same values and the same
-- refusals. The loader runs it ahead of the batch's store (staging.py), into a table of
-- its own, and `stage` takes its rows.
-- The loader checks that every element carries the tag of a different file of the batch
-- (a file holding more than one JSON value, or crafted to swallow its neighbour, cannot
-- know the secret); any error or mismatch sends the batch to `stage_reports`, whose
-- verdict and message stand.
-- maybe_constants is NULL: the loader checked small files for NaN / Infinity before (a
-- batch's large files, parsed strictly, join these rows with theirs).
-- $frame: the array file; $columns: REPORT_COLUMNS and the tag; $tags and $abspaths: each
-- file's tag and path, in the same order; $max_bytes.
-- Template: {table} is the framed rows' table, one of staging.py's allow-listed names.
CREATE OR REPLACE TABLE {table} AS
SELECT s.* EXCLUDE ("relidash:report"), b.abspath AS filename,
       CAST(NULL AS BOOLEAN) AS maybe_constants
FROM read_json($frame, columns = $columns, format = 'array', records = true,
               maximum_object_size = $max_bytes) AS s
LEFT JOIN (SELECT unnest($tags) AS tag, unnest($abspaths) AS abspath) AS b
       ON s."relidash:report" = b.tag
