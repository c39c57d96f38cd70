-- The rows of the temp table `stage` for large report files, as `stage_reports` stages
-- them, for less CPU: DuckDB reads each file as text and
-- `json_transform_strict` takes only the fields relidash uses (a 0.19+ report is mostly
-- evidence it never keeps). The loader runs it in parts at once (staging.py), each into
-- a table of its own, and `stage` is their union.
-- Strict: a missing or duplicate key, a value of the wrong type, or anything after the
-- report object raises, and the loader then reads that file with `stage_reports`, whose
-- verdict and message stand. Where it succeeds the rows equal `stage_reports`' (tested).
-- maybe_constants: the text NaN or Infinity occurs in the file (JSON allows neither; the
-- loader checks such a file exactly, as it does small files before parsing them).
-- One row: one file. $files: absolute paths; $structure: dashboard/data/catalog/schema.py REPORT.
-- Template: {table} is the part's table, one of staging.py's allow-listed names.
CREATE OR REPLACE TABLE {table} AS
SELECT unnest(json_transform_strict(content, $structure)), filename,
       contains(content, 'NaN') OR contains(content, 'Infinity') AS maybe_constants
FROM read_text($files)
