-- Parses one batch of report files with DuckDB's JSON reader into the temp table
-- `stage_json` (the temp view `stage` reads it: dashboard/data/formats/multivon/staging.py).
-- One row: one top-level JSON value of one file (a second row for a file means it holds
-- more than one value). Only the fields relidash uses are materialised; transcripts'
-- execution and provider evidence are skipped by the reader.
-- $files: absolute paths; $columns: column types (dashboard/data/catalog/schema.py);
-- $max_bytes: the per-file size limit.
CREATE OR REPLACE TEMP TABLE stage_json AS
SELECT *
FROM read_json($files, columns = $columns, format = 'auto', records = true,
               filename = true, maximum_object_size = $max_bytes)
