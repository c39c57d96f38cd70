-- The temp view `stage_cases` over the cases the store flattened itself
-- (flatten_cases_temp.sql, after the refused files left `batch_files`). No parameters.
CREATE OR REPLACE TEMP VIEW stage_cases AS SELECT * FROM stage_cases_rows
