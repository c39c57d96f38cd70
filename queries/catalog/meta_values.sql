-- Every key of `meta` that holds a value: one statement where a load would ask for
-- several. One row: (key, value).
SELECT key, value FROM meta WHERE value IS NOT NULL
