-- Everything the last load could not use. One row: one problem (a file can have several).
-- No parameters.
SELECT file, scope, reason FROM problems ORDER BY file, scope, reason
