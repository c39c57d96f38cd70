-- The temp view `stage_cases` over cases flattened ahead: only the rows of the files still
-- in `batch_files` (the files the staged rows refused are out of it).
-- Template: {table} is the flattened cases' table, one of stager.py's allow-listed names.
CREATE OR REPLACE TEMP VIEW stage_cases AS
SELECT * FROM {table} WHERE report_id IN (SELECT report_id FROM batch_files)
