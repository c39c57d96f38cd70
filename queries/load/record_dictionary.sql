-- The catalog's zstandard dictionary for summary entries (none before the first entry is
-- kept). One row: (data).
SELECT data FROM record_dictionary
